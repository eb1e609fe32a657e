// Outgoing mail: SMTP through nodemailer when SMTP_URL is set, else a sink that writes each
// message as an .eml file under the data directory (the local default, so the flow is testable).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer from "nodemailer";

/** One message. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends mail; rejects when the server refuses it. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Mail settings: `smtpUrl` (smtp://user:pass@host:port, smtps://…) wins over `sinkDir`. */
export interface MailConfig {
  smtpUrl?: string;
  /** Directory of the .eml sink (default <data dir>/mail). */
  sinkDir?: string;
  /** From address (default Redline <no-reply@redline.local>). */
  from?: string;
}

/** Builds the mailer for a config. */
export function createMailer(cfg: MailConfig): Mailer {
  const from = cfg.from ?? "Redline <no-reply@redline.local>";
  if (cfg.smtpUrl) {
    const transport = nodemailer.createTransport(cfg.smtpUrl);
    return {
      async send(m) {
        await transport.sendMail({ from, ...m });
      },
      close: () => transport.close(),
    };
  }
  const dir = cfg.sinkDir ?? join(".redline", "mail");
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    async send(m) {
      const info = await transport.sendMail({ from, ...m });
      await mkdir(dir, { recursive: true });
      const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${crypto.randomUUID().slice(0, 8)}.eml`;
      await writeFile(join(dir, name), info.message as Buffer);
    },
    close: () => transport.close(),
  };
}
