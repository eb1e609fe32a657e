// What a command runs with: the process around it (streams, environment, Ctrl-C) and its parsed
// arguments, reporter and client. Types only, so commands and the dispatcher share them without a cycle.
import type { RedlineClient } from "@redline/client";
import type { CliEnv } from "./config.js";
import type { Reporter } from "./output.js";

/** The process around a run: streams, environment and Ctrl-C (main.ts wires the real ones). */
export interface CliIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: CliEnv;
  /** Calls `handler` on each SIGINT until the returned function is called. */
  onInterrupt(handler: () => void): () => void;
}

/** What every command receives. */
export interface CommandContext {
  io: CliIo;
  reporter: Reporter;
  /** Parsed option values (strings and booleans) and positionals. */
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** A client on the resolved connection (the key is required from here on). */
  client(): Promise<RedlineClient>;
}
