// Regression tests for the malformed-request sweep against the running stack: each finding is
// a clear 4xx (never a 500, never a crash), unauthenticated bodies are not read, and a refused
// request writes and bills nothing.
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import { rawJson, rawRequest } from "./support/raw-http.js";
import type { TestStack } from "./support/stack.js";

const MAX_MB = 20;
let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "hostile", maxRequestMb: MAX_MB }, "hostile-user"));
});
afterAll(() => stack?.close());

async function principalOf(k: string) {
  const p = (await stack.accounts.resolveApiKey({ apiKey: k })).principal;
  return {
    userId: p?.userId ?? "",
    organizationId: p?.organizationId ?? "",
    ownerId: p?.ownerId ?? "",
    plan: p?.plan ?? "",
  };
}

async function monthlyUsed(k: string): Promise<number> {
  return (await stack.billing.getUsage({}, { principal: await principalOf(k) })).usage?.monthlyUsed ?? -1;
}

async function expectAlive() {
  const res = await fetch(`${stack.url}/health`);
  expect(res.status).toBe(200);
}

/** A 4xx `{detail: string}` whose detail matches every pattern. */
/** POSTs `body` to a gateway path with the bearer key and exactly these headers (stack.call would set its own Content-Type). */
function postRaw(path: string, headers: Record<string, string>, body: string | Uint8Array<ArrayBuffer>) {
  return fetch(`${stack.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, ...headers },
    body,
  });
}

async function expectDetail(res: Response, status: number, ...patterns: RegExp[]) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { detail: unknown };
  expect(typeof body.detail).toBe("string");
  for (const p of patterns) expect(body.detail).toMatch(p);
  return body;
}

/** A 422 whose items include one at `loc` (and of `type`, when given). */
async function expect422At(res: Response, loc: (string | number)[], type?: string) {
  expect(res.status).toBe(422);
  const body = (await res.json()) as { detail: { type: string; loc: unknown[]; msg: string }[] };
  const item = body.detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(item, JSON.stringify(body.detail)).toBeDefined();
  if (type) expect(item?.type).toBe(type);
  expect(item?.msg.length).toBeGreaterThan(0);
  return item;
}

const TRUNCATED_BOUNDARY = "--rlfz";
/** 80 bytes of multipart whose file part never ends (no closing boundary). */
function truncatedMultipart(): string {
  const text = `--${TRUNCATED_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhi`;
  return text.padEnd(80, "x");
}

describe("truncated multipart (finding 1)", () => {
  for (const path of ["/v1/documents/upload", "/v1/attachments/upload"]) {
    it(`${path}: 401 without a key, 400 "ended early" with one, and the gateway lives on`, async () => {
      const body = truncatedMultipart();
      expect(body.length).toBe(80);
      const head = (auth: string) =>
        [
          `POST ${path} HTTP/1.1`,
          `Host: x`,
          `Content-Type: multipart/form-data; boundary=${TRUNCATED_BOUNDARY}`,
          `Content-Length: ${body.length}`,
          ...(auth ? [`Authorization: Bearer ${auth}`] : []),
        ].join("\r\n");
      const anonymous = await rawRequest(stack.url, head(""), [body]);
      expect(anonymous.status).toBe(401);
      await expectAlive();

      const signed = await rawRequest(stack.url, head(key), [body]);
      expect(signed.status).toBe(400);
      expect(String(rawJson(signed)?.detail)).toMatch(/upload ended early/);
      await expectAlive();

      // The same body cut off by the client mid-part (connection closed early).
      const cut = await rawRequest(
        stack.url,
        head(key).replace(`Content-Length: ${body.length}`, "Content-Length: 5000"),
        [body],
        { abortAfterMs: 200 },
      );
      expect(cut.status).toBe(0);
      await expectAlive();
    });
  }
});

describe("authentication before any body is read (finding 1)", () => {
  it("answers a 15 MB JSON without a key with 401 before the body arrives, and closes the connection", async () => {
    const declared = 15 * 1024 * 1024;
    const res = await rawRequest(
      stack.url,
      ["POST /v1/chat HTTP/1.1", "Host: x", "Content-Type: application/json", `Content-Length: ${declared}`].join(
        "\r\n",
      ),
      // Only the first KB is ever sent: an answer proves the server did not wait to parse it.
      [`{"message": "${"x".repeat(1000)}`],
      { untilClose: true, timeoutMs: 5000 },
    );
    expect(res.status).toBe(401);
    expect(res.headers.connection).toBe("close");
    expect(res.closed).toBe(true);
    expect(String(rawJson(res)?.detail)).toMatch(/Authorization: Bearer/);
    await expectAlive();
  });

  it("never takes an unread body as the next request (one answer, then the connection closes)", async () => {
    const smuggled = `GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    const res = await rawRequest(
      stack.url,
      [
        "POST /v1/chat HTTP/1.1",
        "Host: x",
        "Content-Type: application/json",
        `Content-Length: ${smuggled.length}`,
      ].join("\r\n"),
      [smuggled],
      { untilClose: true, timeoutMs: 5000 },
    );
    expect(res.status).toBe(401);
    expect(res.closed).toBe(true);
    expect(res.body.match(/HTTP\/1\.1 \d{3}/g) ?? []).toEqual([]);
  });

  it("answers a complete 15 MB JSON without a key with 401 quickly", async () => {
    const body = JSON.stringify({ message: "x".repeat(15 * 1024 * 1024) });
    const started = Date.now();
    const res = await rawRequest(
      stack.url,
      ["POST /v1/chat HTTP/1.1", "Host: x", "Content-Type: application/json", `Content-Length: ${body.length}`].join(
        "\r\n",
      ),
      [body],
      { timeoutMs: 10_000, untilClose: true },
    );
    expect(res.status).toBe(401);
    expect(res.headers.connection).toBe("close");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("still applies the cap to a chunked body once authenticated (413)", async () => {
    const chunk = `"${"y".repeat(1024 * 1024)}",`;
    const chunks = Array.from({ length: MAX_MB + 2 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const res = await rawRequest(
      stack.url,
      [
        "POST /v1/chat HTTP/1.1",
        "Host: x",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        `Authorization: Bearer ${key}`,
      ].join("\r\n"),
      ["1\r\n[\r\n", ...chunks, "0\r\n\r\n"],
    );
    expect(res.status).toBe(413);
    expect(rawJson(res)?.error_code).toBe("request_too_large");
  });
});

describe("integer bounds (finding 2)", () => {
  const big = 2 ** 31;
  it("refuses turn_index >= 2^31 in revert and redo-revert with 422", async () => {
    await expect422At(
      await stack.call("POST", "/v1/sessions/s-int/revert", { key, body: { turn_index: big } }),
      ["body", "turn_index"],
      "less_than_equal",
    );
    await expect422At(
      await stack.call("POST", "/v1/sessions/s-int/redo-revert", {
        key,
        body: { turn_index: big, redo_checkpoint_id: "x" },
      }),
      ["body", "turn_index"],
    );
    await expect422At(await stack.call("POST", "/v1/sessions/s-int/revert", { key, body: { turn_index: 1e300 } }), [
      "body",
      "turn_index",
    ]);
  });

  it("refuses offset >= 2^31 and cursors past 2^53 in the query with 422", async () => {
    await expect422At(await stack.call("GET", `/v1/documents?offset=${big}`, { key }), ["query", "offset"]);
    await expect422At(await stack.call("GET", "/v1/documents?limit=99999999999999999999999", { key }), [
      "query",
      "limit",
    ]);
    await expect422At(await stack.call("GET", "/v1/sessions/s-int/doc-events?after_id=9007199254740993", { key }), [
      "query",
      "after_id",
    ]);
    await expect422At(await stack.call("GET", "/v1/chat/s-int/stream?job_id=j&last_sequence=1e400", { key }), [
      "query",
      "last_sequence",
    ]);
    // Still fine at the edge of the range.
    expect((await stack.call("GET", `/v1/documents?offset=${big - 1}`, { key })).status).toBe(200);
  });

  it("refuses an image size past int64's exact JSON range with 422", async () => {
    await expect422At(
      await stack.call("POST", "/v1/chat", {
        key,
        body: {
          message: "hi",
          image_attachments: [{ name: "a.png", base64Data: "AAAA", mimeType: "image/png", size: 1e20 }],
        },
      }),
      ["body", "image_attachments", 0, "size"],
    );
  });
});

/** A raw GET of an unnormalized path (fetch would resolve dot segments and re-encode). */
async function rawGet(path: string) {
  const res = await rawRequest(
    stack.url,
    [`GET ${path} HTTP/1.1`, "Host: x", `Authorization: Bearer ${key}`].join("\r\n"),
  );
  return { status: res.status, detail: String(rawJson(res)?.detail ?? "") };
}

describe("path ids (finding 2)", () => {
  it("answers a malformed percent-encoding with 400 naming the path parameter", async () => {
    expect(await rawGet("/v1/documents/%FF")).toEqual({
      status: 400,
      detail: expect.stringMatching(/Path parameter 'document_id' is not valid percent-encoding/),
    });
    expect(await rawGet("/v1/sessions/%E0%A4/history")).toEqual({
      status: 400,
      detail: expect.stringMatching(/'session_id'/),
    });
    expect(await rawGet("/v1/jobs/%")).toEqual({ status: 400, detail: expect.stringMatching(/'job_id'/) });
  });

  it("refuses NUL in ids with 400 naming the parameter", async () => {
    expect(await rawGet("/v1/documents/abc%00def")).toEqual({
      status: 400,
      detail: expect.stringMatching(/Path parameter 'document_id' must not contain NUL/),
    });
    expect(await rawGet("/v1/sessions/%00/documents")).toEqual({
      status: 400,
      detail: expect.stringMatching(/'session_id'.*NUL/),
    });
  });

  it("refuses NUL in query values with 422", async () => {
    await expect422At(await stack.call("GET", "/v1/sessions/s1/history?focus_document_id=a%00b", { key }), [
      "query",
      "focus_document_id",
    ]);
  });

  it("answers a '..' segment with 400 and a detail, encoded or not", async () => {
    for (const path of ["/v1/sessions/../history", "/v1/sessions/%2e%2e/history", "/v1/documents/.."]) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(400);
      expect(res.detail).toMatch(/must not be '\.\.'.*dot segments/);
    }
  });
});

describe("strings that are not valid Unicode (finding 2)", () => {
  it("refuses a lone surrogate in an export filename with 422 naming the field", async () => {
    const res = await stack.call("POST", "/v1/documents/export", {
      key,
      body: `{"html": "<p>x</p>", "format": "html", "filename": "report-\\ud800.html"}`,
    });
    await expect422At(res, ["body", "filename"], "string_unicode");
  });

  it("still accepts surrogate pairs (emoji) in a filename", async () => {
    const res = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { html: "<p>x</p>", format: "html", filename: "report-😀.html" },
    });
    expect(res.status).toBe(200);
  });
});

describe("validation before any write (finding 3)", () => {
  it("refuses an over-long cross_session_memory_key with 422 and writes or bills nothing", async () => {
    const k = await stack.createKey("memory-key-user");
    const before = await monthlyUsed(k);
    const sid = "hostile-memory-1";
    const res = await stack.call("POST", "/v1/chat", {
      key: k,
      body: {
        session_id: sid,
        message: 'replace "Acme" with "Zeta"',
        document_html: sampleContract(),
        cross_session_memory_key: "m".repeat(5000),
      },
    });
    await expect422At(res, ["body", "cross_session_memory_key"], "string_too_long");
    expect(await monthlyUsed(k)).toBe(before);
    expect((await stack.call("GET", `/v1/sessions/${sid}/history`, { key: k })).status).toBe(404);
    const sessions = (await (await stack.call("GET", "/v1/sessions", { key: k })).json()) as { total: number };
    expect(sessions.total).toBe(0);

    // The bound itself works: 256 characters is a good key.
    const ok = await stack.call("POST", "/v1/chat", {
      key: k,
      body: {
        session_id: sid,
        message: 'replace "Acme" with "Zeta"',
        document_html: sampleContract(),
        cross_session_memory_key: "m".repeat(256),
      },
    });
    expect(ok.status).toBe(200);
  });

  it("bounds editor-action details to 4 KB of JSON per action (422 naming the field, nothing stored)", async () => {
    const init = await stack.call("POST", "/v1/sessions/init", { key, body: {} });
    const { session_id: sid } = (await init.json()) as { session_id: string };
    const action = (details: unknown) => ({ action: "font", value: "Arial", details });
    const res = await stack.call("POST", `/v1/sessions/${sid}/editor-actions`, {
      key,
      body: { actions: [action({ a: 1 }), action({ blob: "z".repeat(5000) })] },
    });
    await expect422At(res, ["body", "actions", 1, "details"], "too_long");
    const history = (await (await stack.call("GET", `/v1/sessions/${sid}/history`, { key })).json()) as {
      editor_actions: unknown[];
    };
    expect(history.editor_actions).toEqual([]);

    const fine = await stack.call("POST", `/v1/sessions/${sid}/editor-actions`, {
      key,
      body: { actions: [action({ blob: "z".repeat(3000) })] },
    });
    expect(fine.status).toBe(200);
  });
});

describe("every 4xx says what to fix (finding 4)", () => {
  it("415 for a Content-Type the route does not take, naming the header and the accepted type", async () => {
    await expectDetail(
      await postRaw("/v1/chat", { "Content-Type": "text/plain" }, "hello"),
      415,
      /Content-Type must be application\/json for this route; got text\/plain/,
    );
    await expectDetail(
      await stack.call("POST", "/v1/documents/upload", { key, body: { file: "x" } }),
      415,
      /Content-Type must be multipart\/form-data for this route; got application\/json/,
    );
  });

  it("415 for a Content-Encoding outside identity/gzip/deflate/br; 400 for one that does not decode", async () => {
    await expectDetail(
      await postRaw("/v1/chat", { "Content-Type": "application/json", "Content-Encoding": "compress" }, "{}"),
      415,
      /Content-Encoding must be identity, gzip, deflate, br.*got compress/,
    );
    await expectDetail(
      await postRaw("/v1/chat", { "Content-Type": "application/json", "Content-Encoding": "gzip" }, "not gzip at all"),
      400,
      /Content-Encoding gzip/,
    );
    // A real gzip body works.
    const gz = await postRaw(
      "/v1/sessions/init",
      { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      gzipSync(JSON.stringify({})),
    );
    expect(gz.status).toBe(200);
  });

  it("415 for a charset JSON cannot be in", async () => {
    await expectDetail(
      await postRaw("/v1/chat", { "Content-Type": "application/json; charset=latin1" }, "{}"),
      415,
      /charset must be utf-8.*got LATIN1/i,
    );
  });

  it("422 naming the limit for JSON nested too deep, json_invalid for malformed JSON", async () => {
    const deep = `${"[".repeat(200)}${"]".repeat(200)}`;
    const res = await stack.call("POST", "/v1/chat", { key, body: `{"message":"x","cursor_context":${deep}}` });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { type: string; msg: string }[] };
    expect(body.detail[0].type).toBe("json_too_deep");
    expect(body.detail[0].msg).toMatch(/deeper than 64 levels/);

    const bad = await stack.call("POST", "/v1/chat", { key, body: '{"message": }' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      detail: [{ type: "json_invalid", loc: ["body", 12], msg: "JSON decode error" }],
    });
  });

  it("requests Node's HTTP parser refuses get a JSON detail too (431 headers too large, 400 CL with TE)", async () => {
    const long = await rawRequest(
      stack.url,
      [`GET /v1/sessions?x=${"a".repeat(20_000)} HTTP/1.1`, "Host: x"].join("\r\n"),
    );
    expect(long.status).toBe(431);
    expect(String(rawJson(long)?.detail)).toMatch(/over the 16 KB limit/);
    const both = await rawRequest(
      stack.url,
      ["POST /v1/chat HTTP/1.1", "Host: x", "Content-Length: 2", "Transfer-Encoding: chunked"].join("\r\n"),
      ["0\r\n\r\n"],
    );
    expect(both.status).toBe(400);
    expect(String(rawJson(both)?.detail)).toMatch(/Transfer-Encoding/);
    const badHeader = await rawRequest(
      stack.url,
      ["GET /v1/sessions HTTP/1.1", "Host: x", "Bad Header: 1"].join("\r\n"),
    );
    expect(badHeader.status).toBe(400);
    expect(String(rawJson(badHeader)?.detail)).toMatch(/header/);
    await expectAlive();
  });

  it("400 naming the boundary for multipart without one; 404 naming the path for unknown routes", async () => {
    await expectDetail(
      await postRaw("/v1/documents/upload", { "Content-Type": "multipart/form-data" }, "x"),
      400,
      /boundary/,
    );
    await expectDetail(await stack.call("GET", "/v1/nope", { key }), 404, /GET \/v1\/nope/);
  });
});
