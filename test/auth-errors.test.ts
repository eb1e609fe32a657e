// Authentication, owner scope, validation errors and the quota, through the gateway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "auth", authCacheTtlMs: 300, maxRequestMb: 1 }, "bob"));
});
afterAll(() => stack?.close());

describe("authentication (interface-spec Authentication)", () => {
  const cases: [string, Record<string, string>][] = [
    ["missing header", {}],
    ["no Bearer prefix", { Authorization: "sk_0123456789abcdef0123456789abcdef" }],
    ["other scheme", { Authorization: "Token sk_0123456789abcdef0123456789abcdef" }],
    ["empty bearer", { Authorization: "Bearer " }],
    ["malformed key", { Authorization: "Bearer not-a-key" }],
    ["unknown key", { Authorization: "Bearer sk_0123456789abcdef0123456789abcdef" }],
  ];
  for (const [name, headers] of cases) {
    it(`401 for ${name}`, async () => {
      const res = await stack.call("GET", "/v1/sessions", { headers });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { detail: unknown };
      expect(typeof body.detail).toBe("string");
    });
  }

  it("accepts a valid key and stops accepting it within seconds of revocation", async () => {
    const k = await stack.createKey("carol");
    expect((await stack.call("GET", "/v1/sessions", { key: k })).status).toBe(200);
    expect(await stack.revokeKey(k)).toBe(true);
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await stack.call("GET", "/v1/sessions", { key: k })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });

  it("needs no key for /health and answers healthy when every service does", async () => {
    const res = await fetch(`${stack.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "healthy" });
  });
});

describe("owner scope", () => {
  it("never shows one tenant's session to another", async () => {
    const other = await stack.createKey("mallory");
    const mine = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'replace "Acme" with "Zeta"', document_html: sampleContract() },
    });
    const { session_id: sid } = (await mine.json()) as { session_id: string };

    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key: other });
    expect(history.status).toBe(404);
    const hijack = await stack.call("POST", "/v1/chat", {
      key: other,
      body: { session_id: sid, message: 'show section "1. Services"' },
    });
    // Session ids are scoped per owner: the same id is a fresh session of the other owner's.
    expect(hijack.status).toBe(200);
    const text = await hijack.text();
    expect(text).not.toContain("Zeta");
    const theirs = await stack.call("GET", `/v1/sessions/${sid}/history`, { key: other });
    expect(((await theirs.json()) as { messages: { content: string }[] }).messages[0].content).toBe(
      'show section "1. Services"',
    );
    const list = (await (await stack.call("GET", "/v1/sessions", { key: other })).json()) as {
      sessions: { session_id: string }[];
    };
    expect(list.sessions.filter((s) => s.session_id === sid)).toHaveLength(1);
    const own = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    expect(((await own.json()) as { messages: unknown[] }).messages).toHaveLength(2);
  });

  it("scopes an organization's keys to the organization", async () => {
    const a = await stack.createKey("dave", { org: "initech" });
    const b = await stack.createKey("erin", { org: "initech" });
    const res = await stack.call("POST", "/v1/chat", {
      key: a,
      body: { message: 'show section "2. Fees and Payment"', document_html: sampleContract() },
    });
    const { session_id: sid } = (await res.json()) as { session_id: string };
    expect((await stack.call("GET", `/v1/sessions/${sid}/history`, { key: b })).status).toBe(200);
    const personal = await stack.createKey("dave");
    expect((await stack.call("GET", `/v1/sessions/${sid}/history`, { key: personal })).status).toBe(404);
  });
});

describe("validation (interface-spec Errors)", () => {
  it("400 for an empty or blank message", async () => {
    for (const message of ["", "   "]) {
      const res = await stack.call("POST", "/v1/chat", { key, body: { message } });
      expect(res.status).toBe(400);
      expect(typeof ((await res.json()) as { detail: unknown }).detail).toBe("string");
    }
  });

  const bad: [string, Record<string, unknown>, (string | number)[]][] = [
    ["a bad model_tier", { message: "x", model_tier: "ultra" }, ["body", "model_tier"]],
    ["a bad thinking_depth", { message: "x", thinking_depth: "slow" }, ["body", "thinking_depth"]],
    ["a session_id outside the pattern", { message: "x", session_id: "has space" }, ["body", "session_id"]],
    ["a session_id over 256 characters", { message: "x", session_id: "a".repeat(257) }, ["body", "session_id"]],
    ["a message of the wrong type", { message: 42 }, ["body", "message"]],
    ["a missing message", { document_html: "<p>x</p>" }, ["body", "message"]],
    ["a bad response_mode", { message: "x", response_mode: "tiny" }, ["body", "response_mode"]],
    [
      "too many images",
      {
        message: "x",
        image_attachments: Array.from({ length: 21 }, (_, i) => ({
          id: `${i}`,
          name: "a.png",
          base64Data: "AA==",
          mimeType: "image/png",
          size: 1,
        })),
      },
      ["body", "image_attachments"],
    ],
  ];
  for (const [name, body, loc] of bad) {
    it(`422 for ${name}`, async () => {
      const res = await stack.call("POST", "/v1/chat", { key, body });
      expect(res.status).toBe(422);
      const json = (await res.json()) as { detail: { type: string; loc: (string | number)[]; msg: string }[] };
      expect(Array.isArray(json.detail)).toBe(true);
      expect(json.detail[0].loc.slice(0, loc.length)).toEqual(loc);
      expect(typeof json.detail[0].type).toBe("string");
      expect(typeof json.detail[0].msg).toBe("string");
    });
  }

  it("drops NUL characters from a turn's message and document instead of failing on them", async () => {
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: {
        message: "Shorten\u0000 the notice period",
        document_html: "<h1>Ter\u0000ms</h1><p>Notice: 30\u0000 days.</p>",
      },
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { session_id: string; document_changes: { updated_html: string } };
    expect(json.document_changes.updated_html).toContain("Terms");
    expect(json.document_changes.updated_html).not.toContain("\u0000");
    const history = await stack.call("GET", `/v1/sessions/${json.session_id}/history`, { key });
    const messages = ((await history.json()) as { messages: { content: string }[] }).messages;
    expect(messages[0].content).toBe("Shorten the notice period");
  });

  it("422 for malformed JSON, 404 JSON for unknown routes", async () => {
    const res = await stack.call("POST", "/v1/chat", { key, body: "{not json" });
    expect(res.status).toBe(422);
    const missing = await stack.call("GET", "/v1/nope", { key });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toBeTruthy();
  });

  it("413 JSON with the spec's fields over the body cap", async () => {
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: "x", document_html: `<p>${"a".repeat(1_200_000)}</p>` },
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error_code: "request_too_large", suggested_action: "split_request", max_size_mb: 1 });
    for (const field of ["detail", "message_user", "request_size_mb", "contact_email", "support_event_id"])
      expect(body[field]).toBeDefined();
  });

  it("serves an OpenAPI 3.1 description of the routes", async () => {
    const res = await fetch(`${stack.url}/openapi.json`);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/v1/chat", "/v1/sessions", "/v1/sessions/{session_id}/history"]),
    );
  });
});

describe("quota (interface-spec Limits)", () => {
  it("50 parallel billable requests with 10 operations left yield exactly 10 successes", async () => {
    const k = await stack.createKey("quinn", { plan: "free" });
    const principal = (await stack.accounts.resolveApiKey({ apiKey: k })).principal;
    if (!principal) throw new Error("no principal");
    // Spend 490 of the 500 free operations through the billing service itself.
    await stack.billing.reserveOperations({ chargeKey: "arrange", operations: 490 }, { principal });
    await stack.billing.settleOperations({ chargeKey: "arrange", operations: 490 }, { principal });

    const doc = sampleContract();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        stack.call("POST", "/v1/chat", {
          key: k,
          body: { message: 'replace "Acme" with "Initech"', document_html: doc, response_mode: "compact" },
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    const r = refused[0];
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(r.headers.get("x-usage-limit")).toBe("500");
    expect(r.headers.get("x-usage-used")).toBe("500");
    expect(r.headers.get("x-usage-remaining")).toBe("0");
    expect(r.headers.get("content-type")).toContain("application/json");
    const usage = (await (await stack.call("POST", "/v1/chat", { key: k, body: { message: "hello" } })).json()) as {
      detail: string;
    };
    expect(typeof usage.detail).toBe("string");
  });
});
