// Outbound webhooks on the real stack (issue #35 part 2): endpoints with a secret shown once,
// Standard Webhooks signatures verified with the `standardwebhooks` package by a real HTTP
// receiver that fails twice then succeeds, job and document events, owner scope, the delivery
// log, and the API's refusals. The stack runs with WEBHOOK_ALLOW_PRIVATE so the receiver may
// listen on 127.0.0.1 (the flag-off refusals are unit tests of the guard and of createEndpoint).
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSavedDocument, editChunk, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import { startJob, startJobAwaitingApproval, waitForJob } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

/** One request the receiver got. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1: records every request; `/flaky/*` answers 500 twice per path, then 200. */
class Receiver {
  readonly received: Received[] = [];
  private readonly failures = new Map<string, number>();
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "";
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        const failed = this.failures.get(path) ?? 0;
        if (path.startsWith("/flaky/") && failed < 2) {
          this.failures.set(path, failed + 1);
          res.writeHead(500).end("not yet");
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests to `path`. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `pred` holds for the requests to `path`, returning them. */
  async waitFor(path: string, pred: (got: Received[]) => boolean, timeoutMs = 20_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (pred(this.at(path))) return this.at(path);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`receiver: ${path} got ${this.at(path).length} requests, condition not met`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A delivered event's parsed body. */
interface EventBody {
  type: string;
  timestamp: string;
  data: Record<string, string>;
}

const bodyOf = (r: Received) => JSON.parse(r.body) as EventBody;

/** Verifies a request with the endpoint's secret, as a receiver would; returns the parsed payload. */
function verify(secret: string, r: Received): EventBody {
  const headers = {
    "webhook-id": String(r.headers["webhook-id"]),
    "webhook-timestamp": String(r.headers["webhook-timestamp"]),
    "webhook-signature": String(r.headers["webhook-signature"]),
  };
  return new Webhook(secret).verify(r.body, headers) as EventBody;
}

let stack: TestStack;
let key: string;
let otherKey: string;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  ({ stack, key } = await startStackWithKey(
    { name: "webhooks", webhooks: { allowPrivate: true, retryBaseMs: 200, pollMs: 100 } },
    "wendy",
  ));
  otherKey = await stack.createKey("oscar");
});
afterAll(async () => {
  await stack?.close();
  await receiver.close();
});

/** Creates an endpoint for `k`; returns the reply. */
function createEndpoint(k: string, body: Record<string, unknown>) {
  return jsonCall(stack, "POST", "/v1/webhooks", k, body);
}

describe("webhooks", () => {
  let flaky: { id: string; secret: string };
  let steady: { id: string; secret: string };
  let others: { id: string; secret: string };

  it("creates endpoints with a whsec_ secret shown once, and lists and gets them without it", async () => {
    const created = await createEndpoint(key, {
      url: `${receiver.url}/flaky/jobs`,
      events: ["job.completed"],
      description: "CI notifier",
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]+$/),
      url: `${receiver.url}/flaky/jobs`,
      events: ["job.completed"],
      description: "CI notifier",
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]+$/),
    });
    flaky = { id: created.body.id, secret: created.body.secret };

    const got = await jsonCall(stack, "GET", `/v1/webhooks/${flaky.id}`, key);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("secret");
    expect(got.body.events).toEqual(["job.completed"]);

    const second = await createEndpoint(key, {
      url: `${receiver.url}/steady`,
      events: ["job.awaiting_approval", "document.updated", "job.failed"],
    });
    expect(second.status).toBe(201);
    expect(second.body).not.toHaveProperty("description");
    steady = { id: second.body.id, secret: second.body.secret };

    const list = await jsonCall(stack, "GET", "/v1/webhooks", key);
    expect(list.status).toBe(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toEqual([steady.id, flaky.id]);
    for (const w of list.body.webhooks) expect(w).not.toHaveProperty("secret");

    const theirs = await createEndpoint(otherKey, {
      url: `${receiver.url}/others`,
      events: ["job.completed", "job.failed", "job.awaiting_approval", "document.updated"],
    });
    expect(theirs.status).toBe(201);
    others = { id: theirs.body.id, secret: theirs.body.secret };
    // Owner scope: the other owner's endpoint is a 404 here, and it does not list ours.
    expect((await jsonCall(stack, "GET", `/v1/webhooks/${others.id}`, key)).status).toBe(404);
    expect((await jsonCall(stack, "GET", `/v1/webhooks/${flaky.id}/deliveries`, otherKey)).status).toBe(404);
    const theirList = await jsonCall(stack, "GET", "/v1/webhooks", otherKey);
    expect(theirList.body.webhooks.map((w: { id: string }) => w.id)).toEqual([others.id]);
  });

  it("delivers job.completed signed, retrying after two 500s with the same webhook-id, and logs 3 attempts", async () => {
    const created = await startJob(stack, key, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    const job = await waitForJob(stack, key, created.body.job_id, ["completed", "failed"]);
    expect(job.status).toBe("completed");

    const got = await receiver.waitFor("/flaky/jobs", (r) => r.length >= 3);
    expect(got).toHaveLength(3);
    const ids = new Set(got.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_[0-9a-f]+$/);
    for (const r of got) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["webhook-signature"]).toMatch(/^v1,/);
      const payload = verify(flaky.secret, r);
      expect(payload).toEqual({
        type: "job.completed",
        timestamp: expect.any(String),
        data: { job_id: job.job_id, session_id: job.session_id, status: "completed" },
      });
    }
    // A tampered body or another endpoint's secret does not verify.
    expect(() => verify(flaky.secret, { ...got[0], body: got[0].body.replace("completed", "failed") })).toThrow();
    expect(() => verify(steady.secret, got[0])).toThrow();

    const log = await waitForLog(flaky.id, (d) => d[0]?.status === "delivered");
    expect(log).toEqual([
      {
        id: [...ids][0],
        event: "job.completed",
        status: "delivered",
        attempts: 3,
        last_response_code: 200,
        created_at: expect.any(String),
        delivered_at: expect.any(String),
      },
    ]);
    // Exactly one delivery row for the one event, however JetStream delivered it.
    const rows = await stack.sessionsDb("sessions.webhook_deliveries").where({ endpoint_id: flaky.id });
    expect(rows).toHaveLength(1);
    const attempts = await stack.sessionsDb("sessions.webhook_attempts").where({ delivery_id: rows[0].id });
    expect(attempts.map((a: { response_code: number }) => a.response_code).sort()).toEqual([200, 500, 500]);
  });

  it("delivers job.awaiting_approval for a job waiting on a human", async () => {
    const { waiting } = await startJobAwaitingApproval(stack, key);
    const got = await receiver.waitFor("/steady", (r) =>
      r.some((x) => bodyOf(x).type === "job.awaiting_approval" && bodyOf(x).data.job_id === waiting.job_id),
    );
    const hit = got.find((x) => bodyOf(x).data.job_id === waiting.job_id);
    expect(hit && verify(steady.secret, hit)).toEqual({
      type: "job.awaiting_approval",
      timestamp: expect.any(String),
      data: { job_id: waiting.job_id, session_id: waiting.session_id, status: "awaiting_approval" },
    });
  });

  it("delivers job.failed with the error", async () => {
    const created = await startJob(stack, key, { message: 'replace "a" with "b"', document_id: "doc_missing" });
    const failed = await waitForJob(stack, key, created.body.job_id, ["failed", "completed"]);
    expect(failed.status).toBe("failed");
    const got = await receiver.waitFor("/steady", (r) => r.some((x) => bodyOf(x).data.job_id === failed.job_id));
    const hit = got.find((x) => bodyOf(x).data.job_id === failed.job_id);
    expect(hit && verify(steady.secret, hit).data).toEqual({
      job_id: failed.job_id,
      session_id: failed.session_id,
      status: "failed",
      error: "Document not found",
    });
  });

  it("delivers document.updated for a human save, and never another owner's events", async () => {
    const saved = await createSavedDocument(stack, key, "<h1>Memo</h1><p>First draft.</p>");
    const chunk = /data-chunk-id="([^"]+)"[^>]*>First draft/.exec(saved.html)?.[1] ?? "";
    expect(chunk).not.toBe("");
    const edited = await jsonCall(
      stack,
      "POST",
      `/v1/sessions/${saved.sessionId}/documents/${saved.slotId}/save`,
      key,
      {
        html: editChunk(saved.html, chunk, "First draft.", "Second draft."),
      },
    );
    expect(edited.status).toBe(200);
    const mine = await receiver.waitFor("/steady", (r) =>
      r.some((x) => bodyOf(x).type === "document.updated" && bodyOf(x).data.version_id === edited.body.version_id),
    );
    const hit = mine.find((x) => bodyOf(x).data.version_id === edited.body.version_id);
    expect(hit && verify(steady.secret, hit)).toEqual({
      type: "document.updated",
      timestamp: expect.any(String),
      data: expect.objectContaining({
        document_id: saved.documentId,
        version_id: edited.body.version_id,
        session_id: saved.sessionId,
        kind: expect.any(String),
      }),
    });

    // The other owner saves too: their endpoint gets their event, ours never does.
    const theirs = await createSavedDocument(stack, otherKey, "<h1>Other</h1><p>Theirs.</p>");
    const theirChunk = /data-chunk-id="([^"]+)"[^>]*>Theirs/.exec(theirs.html)?.[1] ?? "";
    const theirEdit = await jsonCall(
      stack,
      "POST",
      `/v1/sessions/${theirs.sessionId}/documents/${theirs.slotId}/save`,
      otherKey,
      { html: editChunk(theirs.html, theirChunk, "Theirs.", "Still theirs.") },
    );
    expect(theirEdit.status).toBe(200);
    const got = await receiver.waitFor("/others", (r) =>
      r.some((x) => bodyOf(x).data.version_id === theirEdit.body.version_id),
    );
    for (const r of got) verify(others.secret, r);
    // Everything the other owner's endpoint got is theirs: none of our jobs or documents.
    const ourIds = new Set([saved.documentId, edited.body.version_id]);
    for (const r of got) {
      expect(ourIds.has(bodyOf(r).data.document_id)).toBe(false);
      expect(bodyOf(r).data.job_id).toBeUndefined();
    }
    // And ours got nothing of theirs (a moment for a stray delivery to arrive).
    await new Promise((r) => setTimeout(r, 500));
    const all = [...receiver.at("/steady"), ...receiver.at("/flaky/jobs")];
    expect(all.some((r) => bodyOf(r).data.document_id === theirs.documentId)).toBe(false);
  });

  it("refuses bad input with the spec's 422 body, caps endpoints per account with 409, and deletes", async () => {
    const badUrl = await createEndpoint(key, { url: "ftp://example.com/hook", events: ["job.completed"] });
    expect(badUrl.status).toBe(422);
    expect(badUrl.body.detail).toEqual([{ type: "value_error", loc: ["body", "url"], msg: expect.any(String) }]);
    const notUrl = await createEndpoint(key, { url: "not a url", events: ["job.completed"] });
    expect(notUrl.status).toBe(422);
    const badEvent = await createEndpoint(key, { url: `${receiver.url}/x`, events: ["job.exploded"] });
    expect(badEvent.status).toBe(422);
    expect(JSON.stringify(badEvent.body.detail)).toContain("events");
    expect((await createEndpoint(key, { url: `${receiver.url}/x`, events: [] })).status).toBe(422);
    expect((await createEndpoint(key, { url: `${receiver.url}/x` })).status).toBe(422);
    expect((await jsonCall(stack, "GET", "/v1/webhooks/wh_unknown", key)).status).toBe(404);

    const capped = await stack.createKey("carl");
    for (let i = 0; i < 20; i++)
      expect((await createEndpoint(capped, { url: `${receiver.url}/cap/${i}`, events: ["job.failed"] })).status).toBe(
        201,
      );
    const over = await createEndpoint(capped, { url: `${receiver.url}/cap/20`, events: ["job.failed"] });
    expect(over.status).toBe(409);
    expect(over.body).toEqual({ detail: expect.any(String), code: "webhook_limit_reached" });

    expect((await jsonCall(stack, "DELETE", `/v1/webhooks/${others.id}`, key)).status).toBe(404);
    const deleted = await jsonCall(stack, "DELETE", `/v1/webhooks/${flaky.id}`, key);
    expect(deleted).toEqual({ status: 200, body: { id: flaky.id, deleted: true } });
    expect((await jsonCall(stack, "GET", `/v1/webhooks/${flaky.id}`, key)).status).toBe(404);
    expect((await jsonCall(stack, "GET", `/v1/webhooks/${flaky.id}/deliveries`, key)).status).toBe(404);
  });
});

/** Polls the delivery log of `endpointId` until `pred` holds. */
async function waitForLog(
  endpointId: string,
  pred: (deliveries: Record<string, unknown>[]) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown>[] = [];
  while (Date.now() < deadline) {
    const res = await jsonCall(stack, "GET", `/v1/webhooks/${endpointId}/deliveries`, key);
    last = res.body.deliveries ?? [];
    if (res.status === 200 && pred(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`delivery log not as expected: ${JSON.stringify(last)}`);
}
