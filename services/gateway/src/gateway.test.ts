// The gateway over real HTTP with every service down (addresses point at a closed port).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayConfig } from "./config.js";
import { type RunningGateway, startGateway } from "./service.js";

const CLOSED = "127.0.0.1:1";
const addrs = { documents: CLOSED, sessions: CLOSED, agent: CLOSED, billing: CLOSED, ingest: CLOSED };
const KEY = `sk_${"0123456789abcdef".repeat(2)}`;

let gw: RunningGateway;
let tiny: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent" }));
  tiny = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", maxRequestMb: 0.001 }));
});

afterAll(async () => {
  await gw?.close();
  await tiny?.close();
});

async function call(base: RunningGateway, path: string, init: RequestInit = {}) {
  const res = await fetch(`${base.url}${path}`, init);
  const text = await res.text();
  expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> };
}

describe("openapi.json", () => {
  it("is an OpenAPI 3.1 document generated from the request schemas", async () => {
    const { status, body } = await call(gw, "/openapi.json");
    expect(status).toBe(200);
    const doc = body as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          { parameters?: { name: string; in: string }[]; responses: Record<string, unknown>; security: unknown[] }
        >
      >;
      components: {
        schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }>;
        securitySchemes: Record<string, unknown>;
      };
    };
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    for (const path of ["/v1/chat", "/v1/sessions", "/v1/sessions/{session_id}/history", "/health"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.components.schemas.ChatRequest.properties?.model_tier.enum).toEqual(["core", "turbo", "pro", "max"]);
    expect(doc.components.securitySchemes.HTTPBearer).toMatchObject({ type: "http", scheme: "bearer" });
    const chat = doc.paths["/v1/chat"].post;
    for (const s of ["200", "400", "401", "413", "415", "422", "429", "504"])
      expect(chat.responses[s], s).toBeDefined();
    expect(chat.security).toEqual([{ HTTPBearer: [] }]);
    const history = doc.paths["/v1/sessions/{session_id}/history"].get;
    expect(history.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual([
      "path:session_id",
      "query:focus_document_id",
      "query:include_document_html",
    ]);
    expect(doc.paths["/health"].get.security).toEqual([]);
  });
});

describe("routing", () => {
  it("answers unknown routes and methods with a JSON 404", async () => {
    expect(await call(gw, "/v1/nope")).toMatchObject({
      status: 404,
      body: { detail: expect.stringMatching(/^Not Found: no route for GET/) },
    });
    expect(await call(gw, "/v1/chat")).toMatchObject({
      status: 404,
      body: { detail: expect.stringMatching(/^Not Found: no route for GET/) },
    });
    expect(await call(gw, "/v1/sessions", { method: "DELETE" })).toMatchObject({ status: 404 });
  });

  it("echoes a caller's X-Request-Id and mints one otherwise", async () => {
    const given = await fetch(`${gw.url}/v1/nope`, { headers: { "X-Request-Id": "req-123" } });
    expect(given.headers.get("x-request-id")).toBe("req-123");
    const minted = await fetch(`${gw.url}/v1/nope`, { headers: { "X-Request-Id": "bad id with spaces" } });
    expect(minted.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("authentication", () => {
  it.each([
    ["missing", undefined],
    ["another scheme", "Token x"],
    ["Bearer without a key", "Bearer"],
    ["Bearer and a space", "Bearer "],
    ["two spaces", `Bearer  ${KEY}`],
    ["extra part", `Bearer ${KEY} extra`],
  ])("rejects a %s Authorization header with 401", async (_name, header) => {
    const headers: Record<string, string> = header === undefined ? {} : { Authorization: header };
    const res = await call(gw, "/v1/sessions", { headers });
    expect(res.status).toBe(401);
    expect(typeof res.body.detail).toBe("string");
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("checks auth before validation", async () => {
    const res = await call(gw, "/v1/sessions/bad$id/history?include_document_html=maybe");
    expect(res.status).toBe(401);
  });

  it.each(["bearer", "BEARER"])("takes the scheme in any case (%s): the key goes on to billing", async (scheme) => {
    // Billing is down here, so a header that passed the parse is a 503, a refused one a 401.
    const res = await call(gw, "/v1/sessions", { headers: { Authorization: `${scheme} ${KEY}` } });
    expect(res.status).toBe(503);
  });

  it("answers 503 JSON, not 500, for a well-formed key while billing is down", async () => {
    const res = await call(gw, "/v1/sessions", { headers: { Authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: "Service temporarily unavailable; retry shortly" });
  });
});

describe("bodies", () => {
  it("authenticates before parsing: malformed JSON with a key billing cannot check is a 503, not a 422", async () => {
    // The json_invalid 422 itself is covered on the real stack (test/hostile-input.test.ts).
    const res = await call(gw, "/v1/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${KEY}` },
      body: '{"message": }',
    });
    expect(res.status).toBe(503);
  });

  it("answers a body over the cap with the 413 of Errors rule 5, before auth", async () => {
    const res = await call(tiny, "/v1/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "x".repeat(4000) }),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      error_code: "request_too_large",
      suggested_action: "split_request",
      contact_email: "support@redline.local",
      max_size_mb: 0.001,
    });
    expect(typeof res.body.detail).toBe("string");
    expect(typeof res.body.message_user).toBe("string");
    expect(typeof res.body.support_event_id).toBe("string");
    expect(res.body.request_size_mb).toBeGreaterThan(0.001);
  });

  it("refuses an unauthenticated chunked body with 401 before reading it (the cap applies once authenticated)", async () => {
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(`"${"y".repeat(1000)}",`));
        controller.close();
      },
    });
    const res = await call(tiny, "/v1/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(401);
    expect(res.headers.get("connection")).toBe("close");
  });
});

describe("health and readiness", () => {
  it("/health is 200 from the gateway alone, even with every service down", async () => {
    const res = await call(gw, "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "healthy" });
  });

  it("/ready is 503 JSON naming every service when all are down", async () => {
    const res = await call(gw, "/ready");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: "unhealthy", failing: ["agent", "billing", "documents", "ingest", "sessions"] });
  });

  it("both answer 503 naming the gateway from the first moment of a stop; metrics are served on their own port", async () => {
    const own = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", metricsAddr: "127.0.0.1:0" }));
    expect(own.metricsAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(own.metricsAddress?.endsWith(`:${own.port}`)).toBe(false);
    await call(own, "/health");
    const scraped = await (await fetch(`http://${own.metricsAddress}/metrics`)).text();
    expect(scraped).toMatch(/redline_http_requests_total\{method="GET",route="\/health",code="200"\} [1-9]/);
    expect((await call(own, "/metrics")).status).toBe(404);
    const closing = own.close({ unreadyMs: 300, drainMs: 100 });
    await new Promise((r) => setTimeout(r, 50));
    for (const path of ["/health", "/ready"]) {
      const res = await call(own, path);
      expect(res.status, path).toBe(503);
      expect(res.body, path).toEqual({ status: "unhealthy", failing: ["gateway"] });
    }
    await closing;
  });
});
