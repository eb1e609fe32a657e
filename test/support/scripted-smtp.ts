// A mail server for system tests (the outside world, over real SMTP): it accepts every message
// without auth or TLS and keeps each one's envelope recipients and raw text for assertions.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** One accepted message. */
export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  /** The message as sent: headers and body. */
  raw: string;
}

/** A running scripted SMTP server. */
export interface ScriptedSmtp {
  /** `smtp://127.0.0.1:<port>`, for ingest's mail config. */
  url: string;
  /** Messages in the order they arrived. */
  received: ReceivedMail[];
  close(): Promise<void>;
}

/** Starts the server on a free local port. */
export async function startScriptedSmtp(): Promise<ScriptedSmtp> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      const parts: Buffer[] = [];
      stream.on("data", (c: Buffer) => parts.push(c));
      stream.on("end", () => {
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(parts).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
