// The email export's guards (unshown-parts.md, Export) on the real stack, reading the .eml files
// ingest's mail sink writes: the subject is fixed and the filename sanitized, so a caller cannot
// inject headers or write the subject; each account may send only so many per hour (counted in
// Postgres): past that, 429 JSON with Retry-After, while another account is unaffected.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

const PER_HOUR = 3;
const mailDir = mkdtempSync(join(tmpdir(), "redline-mail-"));
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), {
    name: "email_export",
    ingest: { mail: { sinkDir: mailDir }, emailExportsPerHour: PER_HOUR },
  });
});
afterAll(async () => {
  await stack?.close();
});

/** A key whose account has a session `sid` holding a small document. */
async function accountWithDocument(user: string, sid: string): Promise<string> {
  const key = await stack.createKey(user);
  const res = await stack.call("POST", "/v1/documents/upload-base64", {
    key,
    body: {
      filename: "notes.md",
      file_base64: Buffer.from("# Notes\n\nBody text.").toString("base64"),
      session_id: sid,
    },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return key;
}

function requestEmail(key: string, body: Record<string, unknown>) {
  return stack.call("POST", "/v1/documents/export/email-request", { key, body: { format: "txt", ...body } });
}

/** A mail from the sink: its unfolded headers (name lower-cased → values) and raw text. */
interface Mail {
  headers: Map<string, string[]>;
  raw: string;
}

function parseMail(raw: string): Mail {
  const head = raw.slice(0, raw.search(/\r?\n\r?\n/));
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    const name = line.slice(0, i).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
  }
  return { headers, raw };
}

/** Waits for the mails to `to` until `count` arrived (the sink writes each as an .eml file). */
async function mailsTo(to: string, count: number): Promise<Mail[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mails = readdirSync(mailDir)
      .filter((f) => f.endsWith(".eml"))
      .map((f) => parseMail(readFileSync(join(mailDir, f), "utf8")))
      .filter((m) => m.headers.get("to")?.[0] === to);
    if (mails.length >= count || Date.now() > deadline) return mails;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("email export content", () => {
  it("sends a fixed subject and a sanitized filename whatever the caller puts in them", async () => {
    const key = await accountWithDocument("mail-owner-1", "mail-s1");
    const hostile = "../../etc/Q3\r\nBcc: victim@example.org\r\nSubject: You won\u202Egpj.exe\u0000 report.docx";
    const res = await requestEmail(key, {
      session_id: "mail-s1",
      filename: hostile,
      recipient_email: "one@example.com",
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const [mail] = await mailsTo("one@example.com", 1);
    expect(mail).toBeDefined();
    expect(mail.headers.get("subject")).toEqual(["Your Redline export is ready"]);
    expect(mail.headers.get("to")).toEqual(["one@example.com"]);
    expect(mail.headers.has("bcc")).toBe(false);
    expect(mail.headers.has("cc")).toBe(false);
    expect(mail.raw).not.toContain("victim@example.org\r\n");
    // The name in the body: last path segment, no control or bidi characters, the format's extension.
    const text = mail.raw.replace(/=\r?\n/g, "");
    const named = /Your export "([^"]*)" is ready/.exec(text)?.[1] ?? "";
    expect(named).toMatch(/\.txt$/);
    expect(named).not.toMatch(/[\p{Cc}\p{Cf}/\\]/u);
    expect(named).not.toContain(".docx");
    expect(named.length).toBeLessThanOrEqual(110);
  });

  it("keeps a subject field and header-shaped recipients out of the mail", async () => {
    const key = await accountWithDocument("mail-owner-2", "mail-s2");
    const withSubject = await requestEmail(key, {
      session_id: "mail-s2",
      filename: "plain",
      recipient_email: "two@example.com",
      subject: "Urgent: verify your account\r\nBcc: victim@example.org",
    });
    // The body has no subject field: it is dropped (202) or refused (422), never used.
    expect([202, 422]).toContain(withSubject.status);
    if (withSubject.status === 202) {
      const [mail] = await mailsTo("two@example.com", 1);
      expect(mail.headers.get("subject")).toEqual(["Your Redline export is ready"]);
      expect(mail.headers.has("bcc")).toBe(false);
      expect(mail.raw).toContain("plain.txt");
    }
    for (const recipient of [
      "two@example.com\r\nBcc: victim@example.org",
      "two@example.com, victim@example.org",
      "Two <victim@example.org>",
      "two@example.com>",
    ]) {
      const res = await requestEmail(key, { session_id: "mail-s2", recipient_email: recipient });
      expect(res.status, recipient).toBe(400);
      expect(await res.json()).toEqual({ detail: expect.any(String) });
    }
  });
});

describe("email export cap", () => {
  it("answers 429 with Retry-After past the hourly cap; another account is unaffected", async () => {
    const key = await accountWithDocument("mail-capped", "mail-cap");
    for (let i = 0; i < PER_HOUR; i++) {
      const res = await requestEmail(key, { session_id: "mail-cap", recipient_email: `capped${i}@example.com` });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    const over = await requestEmail(key, { session_id: "mail-cap", recipient_email: "capped9@example.com" });
    expect(over.status).toBe(429);
    expect(over.headers.get("content-type")).toContain("application/json");
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(over.headers.get("x-usage-limit")).toMatch(/^\d+$/);
    expect(((await over.json()) as { detail: string }).detail).toContain(`${PER_HOUR} per hour`);

    const other = await accountWithDocument("mail-free", "mail-free");
    const theirs = await requestEmail(other, { session_id: "mail-free", recipient_email: "free@example.com" });
    expect(theirs.status).toBe(202);
    // The refused request left no row, so nothing is sent for it later either.
    const owner = stack.documentsDb;
    const refused = (await owner.raw("select count(*)::int as n from ingest.exports where recipient_email = ?", [
      "capped9@example.com",
    ])) as { rows: { n: number }[] };
    expect(refused.rows[0].n).toBe(0);

    // The window is the database's: once the oldest send is nearly an hour old, Retry-After says
    // so, and once it is older a slot is free again.
    const ids = (await owner.raw(
      "select id from ingest.exports where kind = 'email' and recipient_email like 'capped%' order by created_at",
    )) as { rows: { id: string }[] };
    await owner.raw("update ingest.exports set created_at = now() - interval '59 minutes 50 seconds' where id = ?", [
      ids.rows[0].id,
    ]);
    const soon = await requestEmail(key, { session_id: "mail-cap", recipient_email: "capped9@example.com" });
    expect(soon.status).toBe(429);
    expect(Number(soon.headers.get("retry-after"))).toBeLessThanOrEqual(10);
    await owner.raw("update ingest.exports set created_at = now() - interval '61 minutes' where id = ?", [
      ids.rows[0].id,
    ]);
    const again = await requestEmail(key, { session_id: "mail-cap", recipient_email: "capped9@example.com" });
    expect(again.status).toBe(202);
  });

  it("lets exactly the cap through when requests race", async () => {
    const key = await accountWithDocument("mail-racer", "mail-race");
    const statuses = await Promise.all(
      Array.from({ length: PER_HOUR + 3 }, (_, i) =>
        requestEmail(key, { session_id: "mail-race", recipient_email: `race${i}@example.com` }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 202)).toHaveLength(PER_HOUR);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
  });
});
