// Raw HTTP/1.1 over a socket, for requests fetch will not send: truncated bodies, a declared
// Content-Length with only part of the body, unnormalized paths such as /a/../b.
import { connect } from "node:net";

/** What came back on the socket. */
export interface RawResponse {
  /** 0 when no status line arrived before the timeout or the close. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** True when the server closed the connection (FIN or reset) before the timeout. */
  closed: boolean;
  /** Milliseconds from connect to the status line (or to the end when there was none). */
  firstByteMs: number;
}

/**
 * Writes `head` (request line and headers, without the final blank line) and then each of
 * `chunks`, never half-closing (Node's server drops a request whose client sent FIN), and reads
 * until one whole response (with Content-Length) arrived, the server closes, or `timeoutMs`
 * passes. `untilClose` waits for the close even after a whole response; `abortAfterMs` destroys
 * the socket that long after writing, as a client that gives up mid-body.
 */
export function rawRequest(
  baseUrl: string,
  head: string,
  chunks: (string | Buffer)[] = [],
  opts: { timeoutMs?: number; untilClose?: boolean; abortAfterMs?: number } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const started = Date.now();
    let firstByteMs = -1;
    const received: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString("utf8");
      const [headText, ...rest] = text.split("\r\n\r\n");
      const lines = headText.split("\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const at = line.indexOf(":");
        if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({
        status,
        headers,
        body: rest.join("\r\n\r\n"),
        closed,
        firstByteMs: firstByteMs < 0 ? Date.now() - started : firstByteMs,
      });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("data", (d: Buffer) => {
      if (firstByteMs < 0) firstByteMs = Date.now() - started;
      received.push(d);
      if (opts.untilClose) return;
      const all = Buffer.concat(received);
      const end = all.indexOf("\r\n\r\n");
      if (end < 0) return;
      const headText = all.subarray(0, end).toString("latin1");
      const length = /\r\ncontent-length: *(\d+)/i.exec(headText)?.[1];
      if (length !== undefined && all.length >= end + 4 + Number(length)) finish(false);
      // A stream never ends by itself; a chunked body ends with its zero-length chunk.
      else if (/\r\ncontent-type: *text\/event-stream/i.test(headText)) finish(false);
      else if (/\r\ntransfer-encoding: *chunked/i.test(headText) && all.subarray(-5).toString() === "0\r\n\r\n") {
        finish(false);
      }
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => {
      socket.write(`${head}\r\n\r\n`);
      for (const c of chunks) socket.write(c);
      if (opts.abortAfterMs !== undefined) setTimeout(() => finish(false), opts.abortAfterMs);
    });
  });
}

/** The JSON body of a raw response whose body is not chunked; null when it is not JSON. */
export function rawJson(res: RawResponse): Record<string, unknown> | null {
  try {
    return JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    return null;
  }
}
