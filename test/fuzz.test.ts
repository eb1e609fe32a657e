// Property-based fuzzing of every route in /openapi.json against the real stack: random and
// mutated requests (schema-shaped bodies with hostile values, malformed and deep JSON, wrong
// content types and encodings, truncated multipart, odd path ids and query values, missing or
// malformed auth). Every answer must come within a bound, never be a 5xx, and every 4xx must
// say what is wrong; the gateway must still serve afterwards.
//
// CI runs FUZZ_RUNS (default 500, about 15 s) requests; `pnpm fuzz` runs many more. FUZZ_SEED replays a run.
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";
import { rawJson, rawRequest } from "./support/raw-http.js";
import { startTestStack, type TestStack } from "./support/stack.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
/** FUZZ_VERBOSE=1 prints every distinct 4xx detail seen, for reading what callers are told. */
const VERBOSE = process.env.FUZZ_VERBOSE === "1";
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** No request may take longer than this to get its status line. */
const REQUEST_TIMEOUT_MS = Number(process.env.FUZZ_REQUEST_TIMEOUT_MS ?? 20_000);

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string; schema: Json }[];
  /** Media type → schema of the request body, when the route takes one. */
  body: Record<string, Json>;
}

let stack: TestStack;
let key: string;
let ops: Operation[];
let components: Record<string, Json>;
/** Slot and durable ids of the real session's documents (filled in beforeAll). */
const realIds: string[] = [];

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "fuzz", maxRequestMb: 2, aiTimeoutMs: 10_000 });
  // Enterprise: fuzzed chat turns must not run into the monthly quota (429 is fine, but dull).
  key = await stack.createKey("fuzz-user", { plan: "enterprise" });
  const doc = (await (await fetch(`${stack.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Json> };
  };
  components = doc.components.schemas;
  // A real session holding a saved document, so that fuzzed ids sometimes reach real rows.
  const chat = await stack.call("POST", "/v1/chat", {
    key,
    body: { session_id: "fz-s1", message: 'replace "Acme" with "Zeta"', document_html: sampleContract() },
  });
  expect(chat.status).toBe(200);
  const roster = (await (await stack.call("GET", "/v1/sessions/fz-s1/documents", { key })).json()) as {
    documents: { document_id: string; durable_document_id: string | null }[];
  };
  realIds.push(...roster.documents.flatMap((d) => [d.document_id, d.durable_document_id ?? ""]).filter(Boolean));
  ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      params: (op.parameters as Operation["params"]) ?? [],
      body: Object.fromEntries(
        Object.entries(((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>).map(([t, m]) => [
          t,
          m.schema as Json,
        ]),
      ),
    })),
  );
});
afterAll(async () => {
  await stack?.close();
});

// ---------------------------------------------------------------- values

const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "..",
  "../../etc/passwd",
  "%FF",
  "%00",
  "<script>alert(1)</script>",
  "<p onclick=x>hi</p>",
  "😀",
  "\u202e",
  "null",
  "-1",
  "x".repeat(257),
  "y".repeat(5000),
  "\r\nX-Injected: 1",
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 10 }) },
);

const hostileNumber = fc.oneof(
  fc.constantFrom(-1, 0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1e20, -(2 ** 31) - 1, 1.5, -0),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const anyHostile: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.constant(null),
  fc.boolean(),
  fc.jsonValue({ maxDepth: 2 }),
);

const sessionIdLike = fc.oneof(
  fc.constantFrom("fz-s1", "fz-s2", "s.1", "A_b-c"),
  fc.stringMatching(/^[a-z0-9]{1,12}$/),
);
const uuidLike = fc.uuid();

/** A value shaped like `schema` (refs, unions, objects, arrays, enums), mutated now and then. */
function valueFor(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const s = (schema ?? {}) as Json;
  const shaped = ((): fc.Arbitrary<unknown> => {
    if (typeof s.$ref === "string") return valueFor(components[s.$ref.split("/").pop() as string], depth);
    const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (union) return fc.oneof(...union.map((u) => valueFor(u, depth)));
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    if ("const" in s) return fc.constant(s.const);
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    switch (type) {
      case "string":
        if (s.contentEncoding === "base64") return fc.oneof(fc.base64String({ maxLength: 64 }), hostileString);
        if (s.pattern) return fc.oneof(sessionIdLike, hostileString);
        return fc.oneof(fc.constantFrom("fz-s1", "hello", "<p>Hi</p>", "a.txt", "report.pdf"), uuidLike, hostileString);
      case "integer":
        return fc.oneof(fc.integer({ min: 0, max: 5 }), hostileNumber);
      case "number":
        return fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), hostileNumber);
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array":
        return depth > 4 ? fc.constant([]) : fc.array(valueFor(s.items, depth + 1), { maxLength: 3 });
      case "object": {
        if (depth > 4) return fc.constant({});
        const props = Object.entries((s.properties as Record<string, unknown>) ?? {});
        if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), anyHostile, { maxKeys: 3 });
        return fc.record(Object.fromEntries(props.map(([k, v]) => [k, valueFor(v, depth + 1)])), {
          requiredKeys: [],
        });
      }
      default:
        return anyHostile;
    }
  })();
  return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 1, arbitrary: anyHostile });
}

// ---------------------------------------------------------------- requests

const RAW_SEGMENTS = ["%FF", "%", "%E0%A4", "%00", "..", "%2e%2e", ".", "a%2Fb", "%ED%A0%80", "x".repeat(300), "%20"];

function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80"; // a lone surrogate, as its (invalid) UTF-8 bytes
  }
}

const pathSegment = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(sessionIdLike, uuidLike).map(encodeSegment) },
  { weight: 3, arbitrary: fc.nat().map((n) => (realIds.length > 0 ? realIds[n % realIds.length] : "fz-s1")) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  { weight: 1, arbitrary: hostileString.filter((s) => s.length > 0).map(encodeSegment) },
);

const queryValue = fc.oneof(
  fc.constantFrom("1", "0", "-1", "true", "maybe", "2147483648", "99999999999999999999", "1e400", "%FF", "%00", ""),
  fc.integer().map(String),
  hostileString.map(encodeSegment),
);

const AUTHS = ["none", "Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "Bearer sk_0123456789abcdef0123456789abcdef"];
const authArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant("valid") },
  { weight: 2, arbitrary: fc.constantFrom(...AUTHS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, "")}`) },
);

type BodyMode =
  | "schema"
  | "random-json"
  | "malformed"
  | "deep"
  | "wrong-type"
  | "encoding"
  | "multipart"
  | "truncated-multipart"
  | "broken-http"
  | "none";

interface FuzzRequest {
  op: number;
  segments: string[];
  query: [string, string][];
  auth: string;
  mode: BodyMode;
  value: number;
  pick: number;
  /** The body of random-json mode. */
  json: unknown;
}

const requestArb = fc.record({
  op: fc.nat(),
  segments: fc.array(pathSegment, { minLength: 4, maxLength: 4 }),
  query: fc.array(fc.tuple(fc.oneof(fc.nat({ max: 6 }).map(String), fc.constantFrom("x", "api_key")), queryValue), {
    maxLength: 4,
  }),
  auth: authArb,
  mode: fc.constantFrom<BodyMode>(
    "schema",
    "schema",
    "schema",
    "random-json",
    "malformed",
    "deep",
    "wrong-type",
    "encoding",
    "multipart",
    "truncated-multipart",
    "broken-http",
    "none",
  ),
  value: fc.nat(),
  pick: fc.nat(),
  json: fc.jsonValue({ maxDepth: 3 }),
});

/** Deterministic pick of an element, for choices that depend on the operation. */
const choose = <T>(items: readonly T[], n: number): T => items[n % items.length];

interface Built {
  head: string;
  body: Buffer;
  label: string;
}

/** A request body and the Content-Type / Content-Encoding it goes with (null: no header). */
interface BodyPart {
  body: Buffer;
  contentType: string | null;
  encoding: string | null;
}

/** The body of `r` by its mode: schema-drawn or random JSON, malformed, deep, mislabelled, encoded or multipart. */
function requestBody(r: FuzzRequest, bodyValue: unknown, multipartRoute: boolean): BodyPart {
  const json = (contentType: string, body: Buffer): BodyPart => ({ body, contentType, encoding: null });
  switch (r.mode) {
    case "schema":
    case "random-json":
      return json("application/json", Buffer.from(JSON.stringify(bodyValue) ?? "null"));
    case "malformed": {
      const text = JSON.stringify(bodyValue) ?? "{}";
      const variants = [
        text.slice(0, r.pick % (text.length + 1)),
        `${text}}`,
        `{"a": ${text}`,
        "{'single': 1}",
        "\u0000",
      ];
      return json("application/json", Buffer.from(choose(variants, r.pick)));
    }
    case "deep": {
      const n = choose([65, 200, 5000, 100_000], r.pick);
      const nested = choose([`${"[".repeat(n)}${"]".repeat(n)}`, `${'{"a":'.repeat(n)}1${"}".repeat(n)}`], r.value);
      return json("application/json", Buffer.from(nested));
    }
    case "wrong-type":
      return json(choose(WRONG_CONTENT_TYPES, r.pick), Buffer.from(JSON.stringify(bodyValue) ?? "x"));
    case "encoding":
      return encodedBody(r, Buffer.from(JSON.stringify(bodyValue) ?? "{}"), multipartRoute);
    case "multipart":
    case "truncated-multipart":
      return multipartBody(r);
    case "none":
    case "broken-http":
      return { body: Buffer.alloc(0), contentType: null, encoding: null };
  }
}

/** Content types a JSON route does not take. */
const WRONG_CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/xml",
  "multipart/form-data",
  "multipart/form-data; boundary=",
  "application/json; charset=latin1",
  "application/json; charset=utf-7",
  "image/png",
  ";;;",
];

/** JSON under a Content-Encoding: real gzip, mislabelled, unsupported, stacked or unknown. */
function encodedBody(r: FuzzRequest, json: Buffer, multipartRoute: boolean): BodyPart {
  const [encoding, body] = choose(
    [
      ["gzip", gzipSync(json)],
      ["gzip", json],
      ["deflate", json],
      ["br", json],
      ["compress", json],
      ["gzip, gzip", gzipSync(gzipSync(json))],
      ["x-unknown", json],
      ["identity", json],
    ] as [string, Buffer][],
    r.pick,
  );
  return { body, encoding, contentType: multipartRoute ? "multipart/form-data; boundary=zz" : "application/json" };
}

/** A multipart upload (`file` and `session_id`), cut short in truncated-multipart mode. */
function multipartBody(r: FuzzRequest): BodyPart {
  const boundary = "fzb0undary";
  const filename = choose(["a.txt", "b.html", "c.pdf", "d.docx", "e.rtf", "f.md", "g.exe", "", "..\\x.txt"], r.pick);
  const content = choose(
    ["hello world", "<h1>x</h1><p>y</p>", "%PDF-1.4 garbage", "PK\u0003\u0004junk", "{\\rtf1 x}"],
    r.value,
  );
  const parts = [
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\n${choose(["fz-s1", "", "%00", "x".repeat(300)], r.value)}\r\n`,
    `--${boundary}--\r\n`,
  ].join("");
  const full = Buffer.from(parts);
  const body = r.mode === "truncated-multipart" ? full.subarray(0, 1 + (r.pick % (full.length - 1))) : full;
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, encoding: null };
}

/** The raw request for `r`; values for the body are drawn by `draw` from the route's schema. */
function build(r: FuzzRequest, bodyValue: unknown): Built {
  const op = ops[r.op % ops.length];
  let i = 0;
  const path = op.path.replace(/\{[^}]+\}/g, () => r.segments[i++ % r.segments.length]);
  const declared = op.params.filter((p) => p.in === "query").map((p) => p.name);
  const query = r.query
    .map(([k, v]) => `${/^\d+$/.test(k) && declared.length > 0 ? choose(declared, Number(k)) : k}=${v}`)
    .join("&");
  const target = query ? `${path}?${query}` : path;
  const headers: string[] = [`${op.method} ${target} HTTP/1.1`, "Host: fuzz"];
  if (r.auth === "valid") headers.push(`Authorization: Bearer ${key}`);
  else if (r.auth !== "none") headers.push(`Authorization: ${r.auth}`);

  const multipartRoute = "multipart/form-data" in op.body;
  // schema and random-json requests to an upload route go as multipart.
  const mode = multipartRoute && (r.mode === "schema" || r.mode === "random-json") ? "multipart" : r.mode;
  let { body, contentType, encoding } = requestBody({ ...r, mode }, bodyValue, multipartRoute);
  if (mode === "broken-http") {
    // Requests Node's HTTP parser itself refuses: the answer must still be a JSON 4xx.
    const variant = choose(
      [
        `X-Big: ${"b".repeat(20_000)}`,
        "Bad Header: 1",
        "Transfer-Encoding: chunked",
        "Content-Length: -5",
        "Content-Length: 1, 2",
        "X-Ctl: a\u0001b",
      ],
      r.pick,
    );
    headers.push(variant);
    body = Buffer.from("{}");
    contentType = "application/json";
  }
  if (contentType !== null) headers.push(`Content-Type: ${contentType}`);
  if (encoding !== null) headers.push(`Content-Encoding: ${encoding}`);
  if (mode !== "none") headers.push(`Content-Length: ${body.length}`);
  return { head: headers.join("\r\n"), body, label: `${op.method} ${target} [${mode}, auth=${r.auth}]` };
}

/** Why a 4xx body does not say what to fix, or null when it does. */
function vagueDetail(status: number, body: Json | null): string | null {
  if (!body || !("detail" in body)) return "no JSON detail";
  const detail = body.detail;
  if (typeof detail === "string") {
    const generic = ["bad request", "not found", "unauthorized", "forbidden", "internal server error", "error"];
    if (detail.trim().length < 8 || generic.includes(detail.trim().toLowerCase())) return `vague detail '${detail}'`;
    return null;
  }
  if (Array.isArray(detail)) {
    if (status !== 422) return "a list detail outside 422";
    if (detail.length === 0) return "empty 422 list";
    for (const item of detail as Json[]) {
      if (!Array.isArray(item.loc) || item.loc.length === 0) return "422 item without loc";
      if (typeof item.msg !== "string" || item.msg.length === 0) return "422 item without msg";
      if (typeof item.type !== "string" || item.type.length === 0) return "422 item without type";
    }
    return null;
  }
  if (typeof detail === "object" && detail !== null && "message_user" in detail) return null; // export 413
  return "detail is neither a string nor a list";
}

describe("fuzzing every route (no 5xx, no hang, every 4xx explains itself)", () => {
  it(`survives ${RUNS} random and mutated requests`, { timeout: Math.max(120_000, RUNS * 2_000) }, async () => {
    const statuses = new Map<number, number>();
    const byRoute = new Set<string>();
    const details = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        requestArb.chain((r) => valueFor(Object.values(ops[r.op % ops.length].body)[0]).map((v) => ({ r, v }))),
        async ({ r, v }) => {
          const value = r.mode === "random-json" ? r.json : v;
          const req = build(r, value);
          const op = ops[r.op % ops.length];
          byRoute.add(`${op.method} ${op.path}`);
          const res = await rawRequest(stack.url, req.head, [req.body], { timeoutMs: REQUEST_TIMEOUT_MS });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 0) {
            throw new Error(
              `${req.label}: ${res.closed ? "closed without an answer" : `no answer in ${REQUEST_TIMEOUT_MS} ms`}`,
            );
          }
          if (res.status >= 500) throw new Error(`${req.label}: ${res.status} ${res.body.slice(0, 300)}`);
          if (res.status >= 400) {
            const parsed = rawJson(res);
            if (VERBOSE) {
              const d = parsed?.detail;
              const text = Array.isArray(d) ? `${d[0]?.type}: ${d[0]?.msg}` : JSON.stringify(d);
              details.add(`${res.status} ${text}`.slice(0, 200));
            }
            const problem = vagueDetail(res.status, parsed);
            if (problem) throw new Error(`${req.label}: ${res.status} ${problem}: ${res.body.slice(0, 300)}`);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.info(
      `fuzz: ${RUNS} requests over ${byRoute.size} routes; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    if (VERBOSE) console.info([...details].sort().join("\n"));
    // The gateway and every service still answer.
    expect((await fetch(`${stack.url}/health`)).status).toBe(200);
    expect((await stack.call("GET", "/v1/sessions", { key })).status).toBe(200);
  });
});
