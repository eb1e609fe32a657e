// Where a stack's lines go: the supervisor's and services' lines to stdout (foreground), a
// caller's function or logs/stack.log; the chatty infrastructure output to logs/infra.log.
import { createWriteStream, mkdirSync, renameSync, statSync, type WriteStream } from "node:fs";
import { join } from "node:path";

/** A log file moves to <file>.1 when it is over this size (bytes) as it is opened. */
const ROTATE_AT_BYTES = 10 * 1024 * 1024;

/** Infrastructure lines also worth the main log: problems and the lines that say what started. */
const NOTABLE_INFRA_LINE =
  /\b(ERROR|FATAL|PANIC|WARNING)\b|\[(ERR|WRN|FTL)\]|unexpectedly|previous run|stale|initialised|listening on http/;

/** Appends to a log file, first moving it to <file>.1 when it exceeds ROTATE_AT_BYTES. */
function openLog(path: string): WriteStream {
  try {
    if (statSync(path).size > ROTATE_AT_BYTES) renameSync(path, `${path}.1`);
  } catch {
    // no file yet
  }
  return createWriteStream(path, { flags: "a" });
}

/** The stack's log sinks: `log` for supervisor and service lines, `infraLog` for infra output. */
export interface StackLogs {
  log: (line: string) => void;
  infraLog: (line: string) => void;
  close(): void;
}

/**
 * Opens the logs under <dataDir>/logs: `log` writes to `custom` when given, else stdout
 * (foreground) or logs/stack.log (opened on first use); all infra output goes to logs/infra.log
 * and only notable lines also to `log`.
 */
export function openStackLogs(
  dataDir: string,
  opts: { log?: (line: string) => void; foreground?: boolean },
): StackLogs {
  mkdirSync(join(dataDir, "logs"), { recursive: true });
  let logFile: WriteStream | undefined;
  const log =
    opts.log ??
    (opts.foreground
      ? (line: string) => process.stdout.write(`${line}\n`)
      : (line: string) => {
          logFile ??= openLog(join(dataDir, "logs", "stack.log"));
          logFile.write(`${line}\n`);
        });
  const infraLogFile = openLog(join(dataDir, "logs", "infra.log"));
  const infraLog = (line: string) => {
    infraLogFile.write(`${line}\n`);
    if (NOTABLE_INFRA_LINE.test(line)) log(line);
  };
  const close = () => {
    infraLogFile.end();
    logFile?.end();
  };
  return { log, infraLog, close };
}
