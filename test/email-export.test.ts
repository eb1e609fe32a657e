// The email export's guards and recipients (unshown-parts.md, Export) on the real stack, reading
// what a scripted SMTP server receives over real SMTP: the subject is fixed and the filename
// sanitized, so a caller cannot inject headers or write the subject; each account may send only
// so many per hour (counted in Postgres): past that, 429 JSON with Retry-After, while another
// account is unaffected. Without recipient_email the link goes to the email on file of the key's
// user (PATCH /v1/users/me) once it is verified (issue #30: a typed address identifies nobody),
// and without one the 400 says how to set it.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ScriptedSmtp, startScriptedSmtp } from "./support/scripted-smtp.js";
import { startTestStack, type TestStack, verificationCode } from "./support/stack.js";

const PER_HOUR = 3;
let stack: TestStack;
let smtp: ScriptedSmtp;

beforeAll(async () => {
  smtp = await startScriptedSmtp();
  stack = await startTestStack(inject("infra"), {
    name: "email_export",
    ingest: { mail: { smtpUrl: smtp.url }, emailExportsPerHour: PER_HOUR },
  });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
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

/** A received mail: its unfolded headers (name lower-cased → values), raw text and envelope recipients. */
interface Mail {
  headers: Map<string, string[]>;
  raw: string;
  rcptTo: string[];
}

function parseMail(raw: string, rcptTo: string[]): Mail {
  const head = raw.slice(0, raw.search(/\r?\n\r?\n/));
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    const name = line.slice(0, i).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
  }
  return { headers, raw, rcptTo };
}

function isVerificationMail(m: Mail): boolean {
  return /verification code/i.test(m.headers.get("subject")?.[0] ?? "");
}

/** Verifies the email on file of `key`'s user with the code the scripted server received for `email`. */
async function verifyWithMailedCode(key: string, email: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let code: string | undefined;
  while (!code && Date.now() < deadline) {
    const mail = smtp.received
      .map((m) => parseMail(m.raw, m.to))
      .filter((m) => m.headers.get("to")?.[0] === email && isVerificationMail(m))
      .at(-1);
    code = mail && verificationCode(mail.raw.replace(/=\r?\n/g, ""));
    if (!code) await new Promise((r) => setTimeout(r, 100));
  }
  const res = await stack.call("POST", "/v1/users/me/email/verify", { key, body: { code } });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Waits until `count` mails to `to` arrived (or 30 s passed) and returns those there are. */
async function mailsTo(to: string, count: number): Promise<Mail[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mails = smtp.received
      .map((m) => parseMail(m.raw, m.to))
      .filter((m) => m.headers.get("to")?.[0] === to && !isVerificationMail(m));
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

/** GET or PATCH /v1/users/me: status and JSON body. */
async function me(key: string, email?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res =
    email === undefined
      ? await stack.call("GET", "/v1/users/me", { key })
      : await stack.call("PATCH", "/v1/users/me", { key, body: { email } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the email on file", () => {
  it("is set with PATCH /v1/users/me and receives exports that name no recipient", async () => {
    const key = await accountWithDocument("mail-me", "mail-me");
    const before = await me(key);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ user_id: expect.any(String) });

    const set = await me(key, "  me@example.com ");
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ user_id: before.body.user_id, email: "me@example.com" });
    expect((await me(key)).body).toEqual(set.body);

    // Unverified, the address receives nothing but its code.
    const early = await requestEmail(key, { session_id: "mail-me", filename: "minutes" });
    expect(early.status).toBe(400);
    expect(((await early.json()) as { code: string }).code).toBe("email_not_verified");
    await verifyWithMailedCode(key, "me@example.com");
    expect((await me(key)).body).toEqual({ ...set.body, email_verified_at: expect.any(String) });

    const res = await requestEmail(key, { session_id: "mail-me", filename: "minutes" });
    expect(res.status, await res.clone().text()).toBe(202);
    const queued = (await res.json()) as { recipient_email: string; status: string; message: string };
    expect(queued).toMatchObject({ recipient_email: "me@example.com", status: "queued" });
    expect(queued.message).toContain("me@example.com");
    const [mail] = await mailsTo("me@example.com", 1);
    expect(mail).toBeDefined();
    expect(mail.rcptTo).toEqual(["me@example.com"]);
    expect(mail.headers.get("subject")).toEqual(["Your Redline export is ready"]);
    expect(mail.raw.replace(/=\r?\n/g, "")).toContain("minutes.txt");

    // null and "" mean "no recipient" too; a recipient given wins over the email on file.
    for (const recipient of [null, ""]) {
      const again = await requestEmail(key, { session_id: "mail-me", recipient_email: recipient });
      expect(again.status, String(recipient)).toBe(202);
      expect(((await again.json()) as { recipient_email: string }).recipient_email).toBe("me@example.com");
    }
    expect(await mailsTo("me@example.com", 3)).toHaveLength(3);
  });

  it("without one, answers 400 saying how to set it, and queues nothing", async () => {
    const key = await accountWithDocument("mail-none", "mail-none");
    const res = await requestEmail(key, { session_id: "mail-none" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { detail: string; code: string };
    expect(body).toEqual({ detail: expect.any(String), code: "no_email_on_file" });
    expect(body.detail).toContain('PATCH /v1/users/me {"email":');
    expect(body.detail).toContain("recipient_email");

    // Set, then cleared with null: no email on file again.
    expect((await me(key, "none@example.com")).status).toBe(200);
    const cleared = await me(key, null);
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty("email");
    expect((await requestEmail(key, { session_id: "mail-none" })).status).toBe(400);

    const rows = (await stack.documentsDb.raw("select count(*)::int as n from ingest.exports where owner_id = ?", [
      (await me(key)).body.user_id,
    ])) as { rows: { n: number }[] };
    expect(rows.rows[0].n).toBe(0);
  });

  it("refuses a malformed email with a 422 naming the field and keeps the one on file", async () => {
    const key = await stack.createKey("mail-strict");
    expect((await me(key, "kept@example.com")).status).toBe(200);
    for (const bad of [
      "not-an-address",
      "",
      "a@b",
      "Name <a@example.com>",
      "a@example.com, b@example.com",
      "a@example.com\r\nBcc: victim@example.org",
      `${"x".repeat(250)}@example.com`,
      42,
      ["a@example.com"],
    ]) {
      const res = await me(key, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      const detail = res.body.detail as { type: string; loc: (string | number)[]; msg: string }[];
      expect(detail[0]).toMatchObject({ loc: ["body", "email"], type: expect.any(String), msg: expect.any(String) });
    }
    const missing = await stack.call("PATCH", "/v1/users/me", { key, body: {} });
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as { detail: { loc: string[] }[] }).detail[0].loc).toEqual(["body", "email"]);
    expect((await stack.call("PATCH", "/v1/users/me", { key, body: "{not json" })).status).toBe(422);
    expect((await me(key)).body.email).toBe("kept@example.com");
    expect((await stack.call("PATCH", "/v1/users/me", { body: { email: "x@example.com" } })).status).toBe(401);
    expect((await stack.call("GET", "/v1/users/me")).status).toBe(401);
  });

  it("is each user's own: no account can read or change another's", async () => {
    const alice = await accountWithDocument("mail-alice", "mail-iso");
    const bob = await accountWithDocument("mail-bob", "mail-iso");
    const aliceId = (await me(alice, "alice@example.com")).body.user_id;
    expect((await me(bob)).body).toEqual({ user_id: expect.any(String) });
    expect((await me(bob)).body.user_id).not.toBe(aliceId);
    expect((await me(bob, "bob@example.com")).body.email).toBe("bob@example.com");
    await verifyWithMailedCode(bob, "bob@example.com");
    expect((await me(alice)).body.email).toBe("alice@example.com");
    // There is no path naming another user.
    expect((await stack.call("GET", `/v1/users/${String(aliceId)}`, { key: bob })).status).toBe(404);
    expect(
      (await stack.call("PATCH", `/v1/users/${String(aliceId)}`, { key: bob, body: { email: "x@y.io" } })).status,
    ).toBe(404);
    const res = await requestEmail(bob, { session_id: "mail-iso" });
    expect(((await res.json()) as { recipient_email: string }).recipient_email).toBe("bob@example.com");
    expect(await mailsTo("bob@example.com", 1)).toHaveLength(1);

    // Organization keys: "me" is the key's user; a member's email is not the organization's.
    const carol = await stack.createKey("mail-carol", { org: "mail-org" });
    const dave = await stack.createKey("mail-dave", { org: "mail-org" });
    const carolMe = await me(carol, "carol@example.com");
    expect(carolMe.body).toEqual({
      user_id: expect.any(String),
      organization_id: expect.any(String),
      email: "carol@example.com",
    });
    const daveMe = await me(dave);
    expect(daveMe.body).toEqual({ user_id: expect.any(String), organization_id: carolMe.body.organization_id });
  });
});
