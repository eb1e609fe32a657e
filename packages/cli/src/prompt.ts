// Lines typed by the user (node:readline): a queue of lines, so answers piped in before a question
// is asked are not lost (readline emits piped lines as soon as they arrive), and EOF answers null.
import { createInterface, type Interface } from "node:readline";

/** Questions on stderr, answers from stdin. */
export interface Prompter {
  /** Writes `question` and answers the next line (trimmed), or null at the end of input. */
  ask(question: string): Promise<string | null>;
  close(): void;
}

/**
 * A prompter over the given streams; `onInterrupt` runs on Ctrl-C typed at a terminal prompt.
 * At a terminal readline echoes what is typed only to an output it is given: answers are echoed to
 * `output` unless `echo` is false (a secret, such as the API key `redline login` asks for).
 */
export function createPrompter(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  onInterrupt?: () => void,
  { echo = true }: { echo?: boolean } = {},
): Prompter {
  let rl: Interface | undefined;
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  let ended = false;
  const open = () => {
    if (rl) return;
    rl = createInterface({ input, ...(echo && { output }), terminal: input.isTTY === true });
    rl.on("line", (line) => {
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    });
    rl.on("close", () => {
      ended = true;
      for (const next of waiting.splice(0)) next(null);
    });
    // At a terminal readline swallows Ctrl-C; without this the prompt would only pause.
    rl.on("SIGINT", () => onInterrupt?.());
  };
  return {
    async ask(question) {
      open();
      output.write(question);
      const queued = lines.shift();
      if (queued !== undefined) return queued.trim();
      if (ended) return null;
      const line = await new Promise<string | null>((resolve) => waiting.push(resolve));
      return line === null ? null : line.trim();
    },
    close() {
      rl?.close();
    },
  };
}
