// What the CLI shows while it works: a progress bar (cli-progress) on a TTY, one plain line per
// step otherwise, nothing with --json (stdout then holds exactly one JSON result). Progress and
// notes go to stderr so stdout stays the command's result.
import cliProgress from "cli-progress";

/** Where a command reports progress and results. */
export interface Reporter {
  /** --json: stdout gets one JSON document and no prose. */
  readonly json: boolean;
  /** Starts (or moves to) a stage of long work, e.g. "upload" or "edit", at `percent` (0-100). */
  stage(name: string, percent: number, note?: string): void;
  /** Moves the current stage's progress. */
  progress(percent: number, note?: string): void;
  /** Ends the current stage's bar (a no-op without one). */
  done(): void;
  /** A line of prose for the user (stderr), above the bar. */
  note(line: string): void;
  /** The command's human-readable result (stdout; not printed with --json). */
  result(text: string): void;
  /** The command's machine-readable result (stdout; printed only with --json). */
  resultJson(value: unknown): void;
}

/** Streams and flags a reporter writes to (tests give their own). */
export interface ReporterIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  json: boolean;
}

/** A TTY bar, or plain lines when stderr is not a terminal. */
export function createReporter(io: ReporterIo): Reporter {
  const tty = !io.json && io.stderr.isTTY === true;
  let bar: cliProgress.SingleBar | undefined;
  let current = "";
  let lastLine = "";
  const plain = (line: string) => {
    // Plain mode prints a line per change only, so a log of a long job stays short.
    if (line === lastLine) return;
    lastLine = line;
    io.stderr.write(`${line}\n`);
  };
  const clip = (s: string) => (s.length > 60 ? `${s.slice(0, 59)}…` : s);
  return {
    json: io.json,
    stage(name, percent, note = "") {
      if (io.json) return;
      current = name;
      if (!tty) return plain(`${name}: ${Math.round(percent)}%${note ? ` ${note}` : ""}`);
      bar?.stop();
      bar = new cliProgress.SingleBar(
        { format: `${name.padEnd(8)} [{bar}] {percentage}% {note}`, stream: io.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(100, Math.round(percent), { note: clip(note) });
    },
    progress(percent, note = "") {
      if (io.json) return;
      if (!tty) return plain(`${current}: ${Math.round(percent)}%${note ? ` ${note}` : ""}`);
      bar?.update(Math.round(percent), { note: clip(note) });
    },
    done() {
      bar?.stop();
      bar = undefined;
    },
    note(line) {
      if (io.json) return;
      if (bar) {
        bar.stop();
        bar = undefined;
      }
      io.stderr.write(`${line}\n`);
    },
    result(text) {
      if (!io.json) io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    },
    resultJson(value) {
      if (io.json) io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
  };
}
