// Agent sign-up and takeover (unshown-parts.md, Accounts; interface-spec Authentication rule 5
// and Errors 403/404/410) on the real stack, reading the one-time code from what a scripted SMTP
// server receives: an agent signs up without a key, works, and hands its account to a human by
// email; wrong codes answer 403 with the attempts left, the fifth disables the link for good
// (410, even with the right code), unknown or expired links are 404; a claim keeps the account
// id, so the human's new key sees the agent's sessions and documents. Sign-ups are limited per
// source address.
import { DEFAULT_AGENT_SIGNUPS_PER_HOUR } from "@redline/billing";
import { createDb, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ScriptedSmtp, startScriptedSmtp } from "./support/scripted-smtp.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let smtp: ScriptedSmtp;
let billingDb: Knex;
/** Sign-ups this file made so far (all from 127.0.0.1): the rate-limit test counts on it. */
let signups = 0;

beforeAll(async () => {
  smtp = await startScriptedSmtp();
  stack = await startTestStack(inject("infra"), {
    name: "agent_takeover",
    authCacheTtlMs: 0,
    ingest: { mail: { smtpUrl: smtp.url } },
  });
  billingDb = createDb(stack.databaseUrl, "billing");
});
afterAll(async () => {
  await billingDb?.destroy();
  await stack?.close();
  await smtp?.close();
});

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

async function signUp(body?: unknown): Promise<{ account_id: string; api_key: string; plan: string }> {
  signups++;
  const res = await stack.call("POST", "/v1/agents/signup", { body });
  return (await json(res, 201)) as { account_id: string; api_key: string; plan: string };
}

/** Opens a takeover link for `email` and returns its id and the code from the mail it sent. */
async function handOff(agentKey: string, email: string): Promise<{ id: string; code: string }> {
  const seen = smtp.received.length;
  const res = await json(await stack.call("POST", "/v1/agents/handoff", { key: agentKey, body: { email } }), 201);
  const id = res.handoff_id as string;
  expect(Date.parse(res.expires_at as string)).toBeGreaterThan(Date.now());
  expect(Object.keys(res).sort()).toEqual(["expires_at", "handoff_id"]);
  const mail = smtp.received.slice(seen).find((m) => m.to.includes(email));
  expect(mail, "the takeover mail").toBeDefined();
  const raw = mail?.raw ?? "";
  expect(raw).toMatch(/^Subject: Your Redline account takeover code$/m);
  expect(raw).toContain(id);
  const code = /One-time code: (\d{8})/.exec(raw)?.[1];
  expect(code).toBeDefined();
  return { id, code: code ?? "" };
}

function claim(id: string, code: string) {
  return stack.call("POST", `/v1/agents/handoff/${id}/claim`, { body: { code } });
}

describe("agent sign-up", () => {
  it("needs no key and gives a free account whose key works", async () => {
    const agent = await signUp();
    expect(agent.account_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(agent.api_key).toMatch(/^sk_[0-9a-f]{32}$/);
    expect(agent.plan).toBe("free");
    const me = await json(await stack.call("GET", "/v1/users/me", { key: agent.api_key }), 200);
    expect(me).toEqual({ user_id: agent.account_id });
    const named = await signUp({ name: "research-bot" });
    const keys = await json(await stack.call("GET", "/v1/api-keys", { key: named.api_key }), 200);
    expect(keys.api_keys).toMatchObject([{ name: "research-bot" }]);
  });

  it("refuses a bad body with 422 and counts nothing", async () => {
    await json(await stack.call("POST", "/v1/agents/signup", { body: { name: "x".repeat(101) } }), 422);
    await json(await stack.call("POST", "/v1/agents/signup", { body: "[]" }), 422);
  });
});

describe("handoff and claim", () => {
  it("moves the account with its sessions and documents to the human who claims it", async () => {
    const agent = await signUp({ name: "drafter" });
    const upload = await stack.call("POST", "/v1/documents/upload-base64", {
      key: agent.api_key,
      body: {
        filename: "brief.md",
        file_base64: Buffer.from("# Brief\n\nAgent wrote this.").toString("base64"),
        session_id: "agent-s1",
      },
    });
    await json(upload, 200);

    const { id, code } = await handOff(agent.api_key, "human@example.com");
    const claimed = await json(await claim(id, code), 200);
    expect(claimed.account_id).toBe(agent.account_id);
    const humanKey = claimed.api_key as string;
    expect(humanKey).toMatch(/^sk_[0-9a-f]{32}$/);
    expect(humanKey).not.toBe(agent.api_key);

    const me = await json(await stack.call("GET", "/v1/users/me", { key: humanKey }), 200);
    // The code reached that address, so the claim proves it: the email is verified.
    expect(me).toEqual({
      user_id: agent.account_id,
      email: "human@example.com",
      email_verified_at: expect.any(String),
    });
    const sessions = await json(await stack.call("GET", "/v1/sessions", { key: humanKey }), 200);
    expect(JSON.stringify(sessions)).toContain("agent-s1");
    const history = await json(await stack.call("GET", "/v1/sessions/agent-s1/history", { key: humanKey }), 200);
    expect(JSON.stringify(history)).toContain("Agent wrote this.");
    const docs = await json(await stack.call("GET", "/v1/documents", { key: humanKey }), 200);
    expect(docs.documents).toMatchObject([{ title: "Brief" }]);

    // Used once: the link is gone, and a human's account cannot be handed off again.
    expect((await json(await claim(id, code), 404)).detail).toMatch(/unknown or expired/i);
    const again = await stack.call("POST", "/v1/agents/handoff", { key: humanKey, body: { email: "x@example.com" } });
    await json(again, 409);
  });

  it("answers a wrong code with 403 and the attempts left; the fifth disables the link for good (410)", async () => {
    const agent = await signUp();
    const { id, code } = await handOff(agent.api_key, "careful@example.com");
    const wrong = code === "00000000" ? "11111111" : "00000000";
    for (const left of [4, 3, 2, 1]) {
      const res = await json(await claim(id, wrong), 403);
      expect(res.detail).toBe(`Wrong code: ${left} attempt${left === 1 ? "" : "s"} left`);
    }
    expect((await json(await claim(id, wrong), 410)).detail).toMatch(/disabled for good/);
    expect((await json(await claim(id, code), 410)).detail).toMatch(/disabled for good/);
    // Still the agent's: nothing moved.
    const me = await json(await stack.call("GET", "/v1/users/me", { key: agent.api_key }), 200);
    expect(me).toEqual({ user_id: agent.account_id });
  });

  it("answers 404 for an unknown or expired link", async () => {
    await json(await claim("00000000-0000-4000-8000-000000000000", "12345678"), 404);
    await json(await claim("no-such-link", "12345678"), 404);
    const agent = await signUp();
    const { id, code } = await handOff(agent.api_key, "late@example.com");
    await billingDb("handoffs")
      .where({ id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await json(await claim(id, code), 404)).detail).toMatch(/unknown or expired/i);
  });

  it("keeps codes hashed and refuses a handoff of a non-agent account or a bad address", async () => {
    const agent = await signUp();
    const { id, code } = await handOff(agent.api_key, "hash@example.com");
    const row = await billingDb("handoffs").where({ id }).first();
    expect(JSON.stringify(row)).not.toContain(code);

    const human = await stack.createKey("takeover-human");
    const res = await json(
      await stack.call("POST", "/v1/agents/handoff", { key: human, body: { email: "a@b.co" } }),
      409,
    );
    expect(res.detail).toMatch(/agent account/);
    await json(await stack.call("POST", "/v1/agents/handoff", { key: agent.api_key, body: { email: "nope" } }), 422);
    await json(await stack.call("POST", "/v1/agents/handoff", { body: { email: "a@b.co" } }), 401);
  });
});

describe("control after a takeover (issue #30)", () => {
  it("revokes every key the agent held: its old key can neither revoke the human's key nor change the email", async () => {
    const agent = await signUp({ name: "hijacker" });
    // A second agent key, made before the takeover, is revoked as well.
    const spare = await json(
      await stack.call("POST", "/v1/api-keys", { key: agent.api_key, body: { name: "spare" } }),
      201,
    );
    const { id, code } = await handOff(agent.api_key, "owner@example.com");
    const claimed = await json(await claim(id, code), 200);
    const humanKey = claimed.api_key as string;
    const humanKeys = await json(await stack.call("GET", "/v1/api-keys", { key: humanKey }), 200);
    const [humanKeyRow] = humanKeys.api_keys as { id: string }[];
    expect(humanKeys.api_keys).toHaveLength(1);

    for (const key of [agent.api_key, spare.key as string]) {
      await json(await stack.call("DELETE", `/v1/api-keys/${humanKeyRow.id}`, { key }), 401);
      await json(await stack.call("PATCH", "/v1/users/me", { key, body: { email: "agent@evil.test" } }), 401);
      await json(await stack.call("POST", "/v1/api-keys", { key, body: {} }), 401);
      await json(await stack.call("GET", "/v1/documents", { key }), 401);
    }
    const me = await json(await stack.call("GET", "/v1/users/me", { key: humanKey }), 200);
    expect(me.email).toBe("owner@example.com");
    await json(await stack.call("GET", "/v1/documents", { key: humanKey }), 200);
  });

  it("never lets an agent's key change the email or revoke a key a human holds", async () => {
    const agent = await signUp({ name: "before-takeover" });
    const refused = await json(
      await stack.call("PATCH", "/v1/users/me", { key: agent.api_key, body: { email: "mine@example.com" } }),
      403,
    );
    expect(refused.code).toBe("agent_key");
    const me = await json(await stack.call("GET", "/v1/users/me", { key: agent.api_key }), 200);
    expect(me).toEqual({ user_id: agent.account_id });
    // The operator issues a human key on the same account (admin keys create --user <its name>).
    const { name } = await billingDb("accounts").where({ id: agent.account_id }).first();
    const humanKey = await stack.createKey(name as string);
    const keys = await json(await stack.call("GET", "/v1/api-keys", { key: humanKey }), 200);
    const human = (keys.api_keys as { id: string; prefix: string }[]).find((k) => humanKey.startsWith(k.prefix));
    expect(human).toBeDefined();
    const revoke = await json(await stack.call("DELETE", `/v1/api-keys/${human?.id}`, { key: agent.api_key }), 403);
    expect(revoke.code).toBe("agent_key");
    await json(await stack.call("GET", "/v1/users/me", { key: humanKey }), 200);
  });
});

describe("sign-up rate limit", () => {
  it("answers 429 JSON with Retry-After once the source used its sign-ups of the hour", async () => {
    while (signups < DEFAULT_AGENT_SIGNUPS_PER_HOUR) await signUp();
    const before = await billingDb("accounts").count<{ n: string }[]>({ n: "*" });
    const res = await stack.call("POST", "/v1/agents/signup", { body: {} });
    const body = await json(res, 429);
    expect(body.detail).toMatch(/Too many agent sign-ups/);
    expect(body.code).toBe("signup_limit");
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await billingDb("accounts").count<{ n: string }[]>({ n: "*" })).toEqual(before);

    // No proxy is trusted here (TRUST_PROXY unset): an X-Forwarded-For of the client's choosing
    // does not make it another source.
    const spoofed = await stack.call("POST", "/v1/agents/signup", {
      body: {},
      headers: { "X-Forwarded-For": "203.0.113.77" },
    });
    expect((await json(spoofed, 429)).code).toBe("signup_limit");
  });
});
