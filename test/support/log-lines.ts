// A log destination for tests: pino writes JSON lines into `sink`, and `lines` holds each one
// parsed, in order, so a test can read what a logger said.
import { Writable } from "node:stream";

/** A writable for createLogger's destination, and the JSON objects written to it so far. */
export function logLines(): { lines: Record<string, unknown>[]; sink: Writable } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      // A write may carry more than one line.
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, sink };
}
