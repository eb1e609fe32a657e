// Idempotency-Key (issue #13) over the real stack: a retry with the same key and body answers
// the first response and is charged once; the same key with another body is a 422; keys are
// per owner; a duplicate sent while the first still runs gets 409 or the same answer, never a
// second run. Usage is read from billing (the system of record), not from the replayed body.
import { requestHash, retryKeyOf } from "@redline/gateway";
import { documentsV1, edgePolicyV1 } from "@redline/grpc-stubs";
import { createRpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { principalOf, startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;

beforeAll(async () => {
  ({ stack } = await startStackWithKey({ name: "idempotency" }, "idem-alice"));
});
afterAll(() => stack?.close());

const EDIT = 'replace "Acme Corporation" with "Globex Inc"';

async function used(k: string): Promise<number> {
  const { usage } = await stack.billing.getUsage({}, { principal: await principalOf(stack, k) });
  return usage?.monthlyUsed ?? Number.NaN;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function post(path: string, k: string, idemKey: string | undefined, body: unknown): Promise<Answer> {
  const res = await stack.call("POST", path, {
    key: k,
    body,
    headers: idemKey === undefined ? {} : { "Idempotency-Key": idemKey },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function postForm(k: string, idemKey: string, file: Buffer, filename: string): Promise<Answer> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(file)]), filename);
  const res = await fetch(`${stack.url}/v1/documents/upload`, {
    method: "POST",
    headers: { Authorization: `Bearer ${k}`, "Idempotency-Key": idemKey },
    body: form,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const usageHeadersOf = (a: Answer) =>
  ["x-usage-limit", "x-usage-used", "x-usage-remaining"].map((h) => a.headers.get(h));

describe("POST /v1/chat with Idempotency-Key", () => {
  it("answers a retry with the first response (status, body, X-Usage-*) and charges once", async () => {
    const k = await stack.createKey("idem-chat");
    const body = { message: EDIT, document_html: sampleContract() };
    const first = await post("/v1/chat", k, "chat-1", body);
    expect(first.status).toBe(200);
    const firstJson = JSON.parse(first.text);
    expect(firstJson.usage).toMatchObject({ ops_charged: 1, monthly_used: 1 });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await used(k)).toBe(1);

    const retry = await post("/v1/chat", k, "chat-1", body);
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("content-type")).toMatch(/^application\/json/);
    expect(usageHeadersOf(retry)).toEqual(["500", "1", "499"]);
    // The request id and the rate-limit state describe this request, not the first one.
    expect(retry.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(retry.headers.get("ratelimit")).toMatch(/^"expensive";r=\d+;t=\d+, "expensive-account";r=\d+;t=\d+$/);
    expect(await used(k)).toBe(1);

    // The same JSON with its members in another order is the same request.
    const reordered = await post("/v1/chat", k, "chat-1", { document_html: body.document_html, message: EDIT });
    expect(reordered.status).toBe(200);
    expect(reordered.text).toBe(first.text);
    expect(await used(k)).toBe(1);

    // Without the header, the same body is a new turn (charged again).
    const fresh = await post("/v1/chat", k, undefined, body);
    expect(fresh.status).toBe(200);
    expect(JSON.parse(fresh.text).session_id).not.toBe(firstJson.session_id);
    expect(await used(k)).toBe(2);
  });

  it("refuses the same key with a different body: 422 naming the header, nothing run or charged", async () => {
    const k = await stack.createKey("idem-mismatch");
    const first = await post("/v1/chat", k, "reused", { message: EDIT, document_html: sampleContract() });
    expect(first.status).toBe(200);
    const other = await post("/v1/chat", k, "reused", {
      message: 'make "thirty (30) days" italic',
      document_html: sampleContract(),
    });
    expect(other.status).toBe(422);
    const detail = JSON.parse(other.text).detail as { type: string; loc: string[]; msg: string }[];
    expect(detail).toHaveLength(1);
    expect(detail[0].type).toBe("idempotency_key_reused");
    expect(detail[0].loc).toEqual(["header", "Idempotency-Key"]);
    expect(detail[0].msg).toMatch(/already used with a different request/);
    // Another path with the same key and body is another request too.
    const async = await post("/v1/chat/async", k, "reused", { message: EDIT, document_html: sampleContract() });
    expect(async.status).toBe(422);
    expect(await used(k)).toBe(1);
  });

  it("keeps keys per owner: another tenant's identical key and body runs on its own", async () => {
    const a = await stack.createKey("idem-tenant-a");
    const b = await stack.createKey("idem-tenant-b", { org: "idem-org-b" });
    const body = { message: EDIT, document_html: sampleContract() };
    const fromA = await post("/v1/chat", a, "shared-key", body);
    const fromB = await post("/v1/chat", b, "shared-key", body);
    expect([fromA.status, fromB.status]).toEqual([200, 200]);
    expect(fromB.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.parse(fromB.text).session_id).not.toBe(JSON.parse(fromA.text).session_id);
    expect([await used(a), await used(b)]).toEqual([1, 1]);
    // B's session is B's: A's replayed answer never reached B, and A's retry still gets A's.
    const againA = await post("/v1/chat", a, "shared-key", body);
    expect(againA.text).toBe(fromA.text);
  });

  it("runs a concurrent duplicate once: the others get the same answer or 409 with Retry-After", async () => {
    const k = await stack.createKey("idem-race");
    const body = { message: EDIT, document_html: sampleContract() };
    const answers = await Promise.all(Array.from({ length: 6 }, () => post("/v1/chat", k, "race-1", body)));
    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    expect(ok.length + busy.length).toBe(6);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) expect(a.text).toBe(ok[0].text);
    for (const a of busy) {
      expect(JSON.parse(a.text)).toMatchObject({
        code: "idempotency_in_progress",
        detail: expect.stringMatching(/still in progress/),
      });
      expect(a.headers.get("retry-after")).toBe("1");
    }
    expect(await used(k)).toBe(1);
    const after = await post("/v1/chat", k, "race-1", body);
    expect(after.status).toBe(200);
    expect(after.text).toBe(ok[0].text);
    expect(await used(k)).toBe(1);
  });

  it("answers 409 with Retry-After when the first request is still running after the 2 s wait", async () => {
    const k = await stack.createKey("idem-409");
    const principal = await principalOf(stack, k);
    const body = { message: EDIT, document_html: sampleContract() };
    // The first request, as another gateway holding the claim while its turn runs.
    const held = await stack.edgePolicy.beginIdempotency(
      { idempotencyKey: "slow-1", requestHash: requestHash("POST", "/v1/chat", {}, body), leaseSeconds: 600 },
      { principal },
    );
    expect(held.outcome).toBe(edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED);
    const started = Date.now();
    const retry = await post("/v1/chat", k, "slow-1", body);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(retry.status).toBe(409);
    expect(JSON.parse(retry.text)).toMatchObject({
      code: "idempotency_in_progress",
      detail: expect.stringMatching(/still in progress/),
    });
    expect(retry.headers.get("retry-after")).toBe("1");
    expect(await used(k)).toBe(0);
  });

  it("rejects a malformed key with 400 before running anything", async () => {
    const k = await stack.createKey("idem-bad-key");
    const res = await post("/v1/chat", k, "has space", { message: EDIT, document_html: sampleContract() });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).detail).toMatch(/Idempotency-Key must be 1-255 printable ASCII/);
    const long = await post("/v1/chat", k, "x".repeat(256), { message: EDIT, document_html: sampleContract() });
    expect(long.status).toBe(400);
    expect(await used(k)).toBe(0);
  });

  it("replays a client error too: an empty message stays a 400 for that key", async () => {
    const k = await stack.createKey("idem-400");
    const first = await post("/v1/chat", k, "empty", { message: "   " });
    expect(first.status).toBe(400);
    const retry = await post("/v1/chat", k, "empty", { message: "   " });
    expect(retry.status).toBe(400);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("POST /v1/chat/async with Idempotency-Key", () => {
  it("creates one job and holds one operation for a retried request", async () => {
    const k = await stack.createKey("idem-async");
    const body = { message: EDIT, document_html: sampleContract() };
    const first = await post("/v1/chat/async", k, "job-1", body);
    expect(first.status).toBe(202);
    const retry = await post("/v1/chat/async", k, "job-1", body);
    expect(retry.status).toBe(202);
    expect(JSON.parse(retry.text).job_id).toBe(JSON.parse(first.text).job_id);
    const jobs = await stack
      .agentDb("jobs")
      .where({ session_id: JSON.parse(first.text).session_id })
      .count<{ count: string }[]>("* as count");
    expect(Number(jobs[0].count)).toBe(1);
  });
});

describe("uploads with Idempotency-Key", () => {
  it("stores a retried multipart upload once; another file under the same key is a 422", async () => {
    const k = await stack.createKey("idem-upload");
    const file = Buffer.from("# Alpha\n\nFirst paragraph.");
    const first = await postForm(k, "up-1", file, "a.md");
    expect(first.status).toBe(200);
    const retry = await postForm(k, "up-1", file, "a.md");
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    const docs = await stack
      .documentsDb("documents")
      .where({ owner_id: (await principalOf(stack, k)).ownerId })
      .count<{ count: string }[]>("* as count");
    expect(Number(docs[0].count)).toBe(1);
    const other = await postForm(k, "up-1", Buffer.from("# Beta\n\nSecond."), "a.md");
    expect(other.status).toBe(422);
  });

  it("replays a base64 upload under its key", async () => {
    const k = await stack.createKey("idem-upload-b64");
    const body = { filename: "n.md", file_base64: Buffer.from("# Note\n\nText.").toString("base64") };
    const first = await post("/v1/documents/upload-base64", k, "b64-1", body);
    expect(first.status).toBe(200);
    const retry = await post("/v1/documents/upload-base64", k, "b64-1", body);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
  });
  it("finds the document a first attempt stored before its 5xx, instead of storing a second", async () => {
    const k = await stack.createKey("idem-upload-5xx");
    const principal = await principalOf(stack, k);
    const file_base64 = Buffer.from("# Retried\n\nOnce.").toString("base64");
    const body = { filename: "r.md", file_base64, session_id: "retried", open_mode: "new_tab" };
    // What a first attempt leaves when sessions died between storing the document and opening it
    // (the answer a 5xx, so the key is released and the retry runs again): the document, stored
    // under the key sessions derives from the request's.
    const retryKey = retryKeyOf("r-1", requestHash("POST", "/v1/documents/upload-base64", {}, body));
    const documents = createRpcClient(documentsV1.DocumentsServiceService, stack.addrs.documents);
    const stored = { html: "<h1>Retried</h1><p>Once.</p>", title: "Retried", sessionId: "retried" };
    const first = await documents
      .createDocument({ ...stored, idempotencyKey: `upload:${retryKey}` }, { principal })
      .finally(() => documents.close());
    const count = async () =>
      Number(
        (
          await stack
            .documentsDb("documents")
            .where({ owner_id: principal.ownerId })
            .count<{ count: string }[]>("* as count")
        )[0].count,
      );
    const retry = await post("/v1/documents/upload-base64", k, "r-1", body);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.parse(retry.text)).toMatchObject({
      durable_document_id: first.document?.documentId,
      roster: [expect.objectContaining({ durable_document_id: first.document?.documentId })],
    });
    expect(await count()).toBe(1);
    // Without a key, or under another one, each upload stores its own.
    expect((await post("/v1/documents/upload-base64", k, undefined, body)).status).toBe(200);
    expect((await post("/v1/documents/upload-base64", k, "r-2", body)).status).toBe(200);
    expect(await count()).toBe(3);
  });
});

describe("BeginIdempotency / CompleteIdempotency (billing)", () => {
  const {
    IDEMPOTENCY_OUTCOME_STARTED,
    IDEMPOTENCY_OUTCOME_IN_PROGRESS,
    IDEMPOTENCY_OUTCOME_MISMATCH,
    IDEMPOTENCY_OUTCOME_REPLAY,
  } = edgePolicyV1.IdempotencyOutcome;
  const hash = (c: string) => c.repeat(64);

  it("claims, reports running and mismatched requests, replays, scopes per owner and releases", async () => {
    const principal = await principalOf(stack, await stack.createKey("idem-rpc"));
    const other = await principalOf(stack, await stack.createKey("idem-rpc-other"));
    const begin = (p: typeof principal, h: string) =>
      stack.edgePolicy.beginIdempotency({ idempotencyKey: "k-1", requestHash: h, leaseSeconds: 60 }, { principal: p });

    expect((await begin(principal, hash("a"))).outcome).toBe(IDEMPOTENCY_OUTCOME_STARTED);
    expect((await begin(principal, hash("a"))).outcome).toBe(IDEMPOTENCY_OUTCOME_IN_PROGRESS);
    expect((await begin(principal, hash("b"))).outcome).toBe(IDEMPOTENCY_OUTCOME_MISMATCH);
    expect((await begin(other, hash("a"))).outcome).toBe(IDEMPOTENCY_OUTCOME_STARTED);

    const response = { status: 201, headers: { "content-type": "application/json" }, body: Buffer.from('{"ok":true}') };
    const done = await stack.edgePolicy.completeIdempotency(
      { idempotencyKey: "k-1", requestHash: hash("a"), response },
      { principal },
    );
    expect(done.stored).toBe(true);
    const replay = await begin(principal, hash("a"));
    expect(replay.outcome).toBe(IDEMPOTENCY_OUTCOME_REPLAY);
    expect(replay.response).toEqual(response);

    // Released without a response (a transient failure): the next attempt runs again.
    const released = await stack.edgePolicy.completeIdempotency(
      { idempotencyKey: "k-1", requestHash: hash("a") },
      { principal: other },
    );
    expect(released.stored).toBe(true);
    expect((await begin(other, hash("a"))).outcome).toBe(IDEMPOTENCY_OUTCOME_STARTED);
  });

  it("refuses a malformed key or hash with INVALID_ARGUMENT (400)", async () => {
    const principal = await principalOf(stack, await stack.createKey("idem-rpc-bad"));
    await expect(
      stack.edgePolicy.beginIdempotency(
        { idempotencyKey: "", requestHash: hash("a"), leaseSeconds: 60 },
        { principal },
      ),
    ).rejects.toMatchObject({ httpStatus: 400 });
    await expect(
      stack.edgePolicy.beginIdempotency(
        { idempotencyKey: "k", requestHash: "nothex", leaseSeconds: 60 },
        { principal },
      ),
    ).rejects.toMatchObject({ httpStatus: 400 });
  });
});
