// The gateway's request middleware on a real HTTP server, one small Express app wired in the
// order app.ts uses: request context (request id, access log), the declared body cap, the path
// guard, the body type and JSON guards, the JSON 404, the error middleware and the HTTP parser's
// clientError answer. (The full app over the real services: gateway.test.ts and test/.)
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { createLogger, RedlineError, RemoteError, UnavailableError } from "@redline/service-kit";
import express from "express";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bodySizeGuard, bodyTypeGuard, jsonBody, MAX_JSON_DEPTH } from "./body.js";
import { gatewayConfig } from "./config.js";
import { errorHandler, notFound, onClientError, toHttpReply } from "./error-handler.js";
import { requestContext, requestState } from "./request-context.js";
import { pathGuard, type Route } from "./route-registry.js";

/** About 10 KB: small enough to cross from a test, the same code path as 100 MB. */
const cfg = gatewayConfig({ maxRequestMb: 0.01 });
const CAP_BYTES = Math.floor(0.01 * 1024 * 1024);

let logLines: Record<string, unknown>[] = [];
const log = createLogger("gateway-test", "info", {
  write: (line: string) => {
    logLines.push(JSON.parse(line) as Record<string, unknown>);
  },
});
/** How often a route handler ran: a guard that refused must leave it at 0. */
let handled = 0;

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(requestContext(log));
  app.use(bodySizeGuard(cfg));
  app.use(pathGuard([{ path: "/v1/sessions/{session_id}/history" } as Route]));
  const echo: express.RequestHandler = (req, res) => {
    handled++;
    res.json({ body: req.body ?? null, requestId: requestState(res).requestId });
  };
  app.post("/json", bodyTypeGuard("application/json"), jsonBody(cfg), echo);
  app.post("/upload", bodyTypeGuard("multipart/form-data"), echo);
  app.get("/v1/sessions/:session_id/history", echo);
  app.get("/boom", () => {
    throw new Error("connection string postgres://secret@db");
  });
  app.get("/down", () => {
    throw new UnavailableError("RPC /redline.sessions.v1.SessionsService/GetSession unavailable");
  });
  app.post("/down", () => {
    throw new UnavailableError("billing unavailable");
  });
  app.use(notFound);
  app.use(errorHandler);
  server = createServer(app);
  server.on("clientError", onClientError);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  logLines = [];
  handled = 0;
});

/** Sends raw bytes on a new connection and reads until the server closes it. */
function raw(bytes: string | Buffer): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    socket.on("data", (chunk) => {
      out += chunk.toString("utf8");
    });
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
    socket.write(bytes);
  });
}

/** fetch's BodyInit takes bytes as a plain Uint8Array. */
const bytes = (body: string | Buffer) => (typeof body === "string" ? body : new Uint8Array(body));

const postJson = (body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(`${base}/json`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: bytes(body),
  });

describe("request context", () => {
  it("keeps a well-formed X-Request-Id, echoes it, and logs one access line without the query", async () => {
    const res = await fetch(`${base}/v1/sessions/s1/history?api_key=sk_leaked`, {
      headers: { "x-request-id": "trace-1.a:b_c" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("trace-1.a:b_c");
    expect(((await res.json()) as { requestId: string }).requestId).toBe("trace-1.a:b_c");
    await new Promise((resolve) => setImmediate(resolve));
    const access = logLines.filter((l) => l.msg === "request");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      requestId: "trace-1.a:b_c",
      method: "GET",
      path: "/v1/sessions/s1/history",
      status: 200,
    });
    expect(typeof access[0]?.durationMs).toBe("number");
    expect(JSON.stringify(logLines)).not.toContain("sk_leaked");
  });

  it("mints a UUID for a missing, too long or malformed request id", async () => {
    for (const given of [undefined, "x".repeat(129), "a b", "<script>"]) {
      const res = await fetch(`${base}/v1/sessions/s1/history`, { headers: given ? { "x-request-id": given } : {} });
      const id = res.headers.get("x-request-id") ?? "";
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(((await res.json()) as { requestId: string }).requestId).toBe(id);
    }
  });
});

describe("body size guard", () => {
  it("answers 413 for a declared Content-Length over the cap without running the route, and closes", async () => {
    const res = await postJson(JSON.stringify({ text: "x".repeat(CAP_BYTES) }));
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error_code: "request_too_large", max_size_mb: 0.01, contact_email: cfg.supportEmail });
    expect(body.support_event_id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(handled).toBe(0);
    expect(logLines.some((l) => l.msg === "request too large" && l.supportEventId === body.support_event_id)).toBe(
      true,
    );
  });

  it("catches a chunked body over the cap while it is read", async () => {
    const chunks = [Buffer.from(`{"text":"${"x".repeat(CAP_BYTES)}"}`)];
    const res = await fetch(`${base}/json`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (const c of chunks) controller.enqueue(c);
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(handled).toBe(0);
  });
});

describe("body type guard", () => {
  it("refuses another Content-Type with a 415 naming what was sent and what is accepted", async () => {
    const res = await fetch(`${base}/json`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      "Content-Type must be application/json for this route; got text/plain",
    );
    expect(handled).toBe(0);
  });

  it("takes JSON without a Content-Type, application/*+json, and gzip; refuses an unknown encoding", async () => {
    const none = await fetch(`${base}/json`, { method: "POST", body: bytes(Buffer.from('{"a":1}')) });
    expect(none.status).toBe(200);
    expect(((await none.json()) as { body: unknown }).body).toEqual({ a: 1 });
    const vendor = await postJson('{"a":2}', { "content-type": "application/merge-patch+json" });
    expect(((await vendor.json()) as { body: unknown }).body).toEqual({ a: 2 });
    const gz = await postJson(gzipSync('{"a":3}'), { "content-encoding": "gzip" });
    expect(((await gz.json()) as { body: unknown }).body).toEqual({ a: 3 });
    const compress = await postJson('{"a":4}', { "content-encoding": "compress" });
    expect(compress.status).toBe(415);
    expect(((await compress.json()) as { detail: string }).detail).toMatch(/^Content-Encoding must be identity, gzip/);
    expect(handled).toBe(3);
  });

  it("takes multipart only as multipart/form-data in identity", async () => {
    const json = await fetch(`${base}/upload`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(415);
    const gz = await fetch(`${base}/upload`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x", "content-encoding": "gzip" },
      body: bytes(gzipSync("--x--")),
    });
    expect(gz.status).toBe(415);
    expect(((await gz.json()) as { detail: string }).detail).toMatch(/multipart\/form-data body; got gzip/);
    expect(handled).toBe(0);
  });
});

describe("JSON body", () => {
  it("answers 422 json_invalid with the byte offset of a syntax error", async () => {
    const res = await postJson('{"a": 1,, }');
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { type: string; loc: unknown[] }[] };
    expect(detail).toHaveLength(1);
    expect(detail[0]?.type).toBe("json_invalid");
    expect(detail[0]?.loc[0]).toBe("body");
    expect(typeof detail[0]?.loc[1]).toBe("number");
    expect(handled).toBe(0);
  });

  it("answers 422 for nesting deeper than MAX_JSON_DEPTH and for lone surrogates", async () => {
    const deep = `${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`;
    expect((await postJson(deep)).status).toBe(422);
    expect((await postJson('{"a":"\\ud800"}')).status).toBe(422);
    const ok = `${"[".repeat(MAX_JSON_DEPTH - 1)}${"]".repeat(MAX_JSON_DEPTH - 1)}`;
    expect((await postJson(ok)).status).toBe(200);
    expect(handled).toBe(1);
  });

  it("removes NUL from strings, keys' values and a top-level string", async () => {
    const res = await postJson('{"a":"x\\u0000y","b":["\\u0000"]}');
    expect(((await res.json()) as { body: unknown }).body).toEqual({ a: "xy", b: [""] });
    const top = await postJson('"p\\u0000q"');
    expect(((await top.json()) as { body: unknown }).body).toBe("pq");
  });

  it("answers 400 naming the encoding for a body that does not inflate", async () => {
    const res = await postJson("not gzip at all", { "content-encoding": "gzip" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /^Body could not be decoded as Content-Encoding gzip/,
    );
  });
});

describe("path guard", () => {
  it("passes a well-formed path and names the route's parameter for a bad one", async () => {
    expect((await fetch(`${base}/v1/sessions/s%20one/history`)).status).toBe(200);
    const cases: [string, RegExp][] = [
      ["/v1/sessions/%E0%A4%A/history", /^Path parameter 'session_id' is not valid percent-encoding/],
      ["/v1/sessions/%2e%2e/history", /^Path parameter 'session_id' must not be '\.\.'/],
      ["/v1/sessions/a%00b/history", /^Path parameter 'session_id' must not contain NUL/],
      ["/other/%ff", /^Path segment 2 \('%ff'\) is not valid percent-encoding/],
    ];
    for (const [path, detail] of cases) {
      // Raw, since fetch would resolve %2e%2e as a dot segment before sending.
      const reply = await raw(`GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
      expect(reply, path).toMatch(/^HTTP\/1\.1 400 /);
      expect((JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as { detail: string }).detail).toMatch(detail);
    }
    expect(handled).toBe(1);
  });
});

describe("not found and the error middleware", () => {
  it("answers an unknown route with a JSON 404 naming method and path", async () => {
    const res = await fetch(`${base}/v2/nothing`, { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      detail: "Not Found: no route for DELETE /v2/nothing; the routes are listed at /openapi.json",
    });
  });

  it("answers an unexpected error with a bare 500, logging it with the request id", async () => {
    const res = await fetch(`${base}/boom`, { headers: { "x-request-id": "req-boom" } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ detail: "Internal server error" });
    expect(text).not.toContain("secret");
    const logged = logLines.find((l) => l.msg === "unexpected error");
    expect(logged).toMatchObject({ requestId: "req-boom", level: 50 });
  });

  it("answers a local dependency failure with a generic 503 and Retry-After, never the RPC path", async () => {
    const res = await fetch(`${base}/down`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ detail: "Service temporarily unavailable; retry shortly" });
    expect(text).not.toContain("SessionsService");
  });

  it("reads and drops a small unread body before a 503, so the client gets the answer", async () => {
    const body = "x".repeat(2_000);
    const reply = await raw(
      `POST /down HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 503 /);
    expect(reply).toContain("Retry-After: 1");
  });
});

describe("toHttpReply", () => {
  const logged: [string, string][] = [];
  const record = (level: "warn" | "error", msg: string) => {
    logged.push([level, msg]);
  };
  beforeEach(() => {
    logged.length = 0;
  });

  it("keeps a RedlineError's status, detail, extra body fields and headers", () => {
    const err = new RedlineError(429, GrpcStatus.RESOURCE_EXHAUSTED, "slow down", {
      body: { code: "rate_limited", detail: "ignored" },
      headers: { "Retry-After": "7" },
    });
    expect(toHttpReply(err, record)).toEqual({
      status: 429,
      body: { detail: "slow down", code: "rate_limited" },
      headers: { "Retry-After": "7" },
    });
    expect(logged).toEqual([]);
  });

  it("gives every 503 a Retry-After, keeping the service's own", () => {
    const remote = new RemoteError({ httpStatus: 503, detail: "restarting" }, GrpcStatus.UNAVAILABLE);
    expect(toHttpReply(remote, record)).toMatchObject({ status: 503, headers: { "Retry-After": "1" } });
    const own = new RemoteError(
      { httpStatus: 503, detail: "restarting", headers: { "Retry-After": "4" } },
      GrpcStatus.UNAVAILABLE,
    );
    expect(toHttpReply(own, record).headers).toEqual({ "Retry-After": "4" });
  });

  it("hides a service's 500 and a local deadline behind generic answers, and logs them", () => {
    const internal = new RemoteError({ httpStatus: 500, detail: "null pointer in x.ts" }, GrpcStatus.INTERNAL);
    expect(toHttpReply(internal, record)).toEqual({
      status: 500,
      body: { detail: "Internal server error" },
      headers: {},
    });
    const deadline = new RedlineError(504, GrpcStatus.DEADLINE_EXCEEDED, "RPC /x/Y timed out");
    expect(toHttpReply(deadline, record)).toEqual({
      status: 504,
      body: { detail: "An internal service did not answer in time" },
      headers: {},
    });
    expect(logged.map(([level]) => level)).toEqual(["error", "warn"]);
  });

  it("passes an exposed http-errors 4xx through and turns anything else into a 500", () => {
    const malformed = Object.assign(new Error("Failed to decode param '%E0'"), { status: 400, expose: true });
    expect(toHttpReply(malformed, record)).toEqual({
      status: 400,
      body: { detail: "Failed to decode param '%E0'" },
      headers: {},
    });
    const hidden = Object.assign(new Error("internal"), { status: 400, expose: false });
    expect(toHttpReply(hidden, record).status).toBe(500);
    expect(toHttpReply("a string", record).status).toBe(500);
  });
});

describe("onClientError", () => {
  it("answers what the HTTP parser refuses with a JSON detail, then closes", async () => {
    const badLength = await raw("POST /json HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n");
    expect(badLength).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(badLength).toContain("Connection: close");
    expect(badLength).toContain('{"detail":"Content-Length must be a single non-negative decimal number"}');

    const huge = await raw(`GET / HTTP/1.1\r\nHost: t\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(huge).toContain("16 KB limit");
  });

  it("names an unknown parser error by its code", async () => {
    const reply = await raw(`GET /${randomUUID()} HTTP/9.9\r\nHost: t\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(reply).toMatch(/"detail":"Malformed request line: the HTTP version|Malformed HTTP request \(/);
  });
});
