// The progress stream's edges (unshown-parts.md, Progress stream): a client resuming at or after
// the end of a finished job gets the terminal events again and the stream ends; a wrong job is
// one error event (the same for another owner's); a revoked key ends an open stream within the
// auth cache TTL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import {
  type JobJson,
  readSse,
  type SseEvent,
  startJob,
  startJobAwaitingApproval,
  waitForJob,
} from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

/** The gateway's auth cache TTL in this file: a revocation shows within it. */
const TTL_MS = 300;

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey(
    { name: "stream", authCacheTtlMs: TTL_MS, streamHeartbeatMs: 200 },
    "stream-alice",
  ));
});
afterAll(() => stack?.close());

/** The job's last event sequence (intermediate_responses holds every stored event). */
function lastSequence(job: JobJson): number {
  return Math.max(...(job.metadata.intermediate_responses ?? []).map((e) => e.sequence));
}

/** Resumes the job's stream at `after`, by query and by Last-Event-ID; both must end promptly. */
async function resume(job: JobJson, after: number): Promise<SseEvent[][]> {
  const path = `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`;
  const reads = [
    () => readSse(stack, `${path}&last_sequence=${after}&api_key=${key}`, { timeoutMs: 8000 }),
    () => readSse(stack, `${path}&token=${key}`, { headers: { "Last-Event-ID": String(after) }, timeoutMs: 8000 }),
  ];
  const out: SseEvent[][] = [];
  for (const read of reads) {
    const started = Date.now();
    const r = await read();
    expect(r.status).toBe(200);
    expect(r.ended).toBe(true);
    // Well before the 5 s re-poll of a stream that waits for more.
    expect(Date.now() - started).toBeLessThan(3000);
    out.push(r.events);
  }
  return out;
}

describe("resuming a finished job's stream", () => {
  it("re-sends final and usage of a completed job, at and past the last sequence", async () => {
    const created = await startJob(stack, key, {
      message: 'make "thirty (30) days" italic',
      document_html: sampleContract(),
    });
    const job = await waitForJob(stack, key, created.body.job_id, ["completed"]);
    const last = lastSequence(job);
    for (const after of [last, last + 1, last + 1000]) {
      for (const events of await resume(job, after)) {
        expect(events.map((e) => e.event)).toEqual(["final", "usage"]);
        const [final, usage] = events;
        expect(Number(usage.id)).toBe(last);
        expect(Number(final.id)).toBe(last - 1);
        expect((final.data.result as { response: string }).response).toBe(job.result?.response);
        expect(Object.keys(usage.data).sort()).toEqual(["monthly_limit", "monthly_remaining", "monthly_used"]);
      }
    }
    // Resuming between final and usage still sends only what follows.
    const between = await resume(job, last - 1);
    expect(between.map((events) => events.map((e) => e.event))).toEqual([["usage"], ["usage"]]);
  });

  it("re-sends the error of a failed job", async () => {
    const created = await startJob(stack, key, { message: 'replace "a" with "b"', document_id: "doc_missing" });
    const job = await waitForJob(stack, key, created.body.job_id, ["failed"]);
    const last = lastSequence(job);
    for (const after of [last, last + 7]) {
      for (const events of await resume(job, after)) {
        expect(events).toEqual([{ id: String(last), event: "error", data: { error: "Document not found" } }]);
      }
    }
  });

  it("re-sends the error of a cancelled job", async () => {
    const { waiting } = await startJobAwaitingApproval(stack, key);
    expect((await stack.call("POST", `/v1/jobs/${waiting.job_id}/cancel`, { key })).status).toBe(200);
    const job = await waitForJob(stack, key, waiting.job_id, ["cancelled"]);
    const last = lastSequence(job);
    for (const after of [last, last + 3]) {
      for (const events of await resume(job, after)) {
        expect(events).toEqual([{ id: String(last), event: "error", data: { error: "Job cancelled" } }]);
      }
    }
  });
});

describe("a stream of a job that is not the caller's", () => {
  let job: JobJson;

  beforeAll(async () => {
    const created = await startJob(stack, key, { message: "please write me a poem" });
    job = await waitForJob(stack, key, created.body.job_id, ["completed"]);
  });

  // unshown-parts.md, Progress stream: `error: {error}` for ... unknown jobs. Clients end on it.
  async function expectNotFoundEvent(path: string, headers: Record<string, string> = {}) {
    const read = await readSse(stack, path, { headers, timeoutMs: 5000 });
    expect(read.status).toBe(200);
    expect(read.ended).toBe(true);
    expect(read.events).toEqual([{ event: "error", data: { error: "Job not found" } }]);
  }

  it("is one error event, the same for an unknown job, another owner's job and another session's path", async () => {
    await expectNotFoundEvent(`/v1/chat/${job.session_id}/stream?job_id=job_missing&api_key=${key}`);
    const other = await stack.createKey("stream-eve");
    await expectNotFoundEvent(`/v1/chat/${job.session_id}/stream?job_id=${job.job_id}&api_key=${other}`);
    await expectNotFoundEvent(`/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`, {
      Authorization: `Bearer ${other}`,
    });
    // The owner's own job under a path naming another session of the owner (or none).
    const second = await startJob(stack, key, { message: "please write me a haiku" });
    await expectNotFoundEvent(`/v1/chat/${second.body.session_id}/stream?job_id=${job.job_id}&api_key=${key}`);
    await expectNotFoundEvent(`/v1/chat/no-such-session/stream?job_id=${job.job_id}&api_key=${key}`);
    // The right session still streams.
    const ok = await readSse(stack, `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}&api_key=${key}`);
    expect(ok.status).toBe(200);
    expect(ok.events.at(-1)?.event).toBe("usage");
  });
});

describe("a stream whose key is revoked", () => {
  it("delivers nothing after the cache TTL and ends with an error event", async () => {
    const streamKey = await stack.createKey("stream-carol");
    const otherKey = await stack.createKey("stream-carol");
    const { sid, waiting } = await startJobAwaitingApproval(stack, streamKey);

    const arrivals: { event: SseEvent; at: number }[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    let endedAt = Number.POSITIVE_INFINITY;
    const reading = readSse(stack, `/v1/chat/${sid}/stream?job_id=${waiting.job_id}&api_key=${streamKey}`, {
      timeoutMs: 15_000,
      onEvent: (event) => arrivals.push({ event, at: Date.now() }),
    }).then((r) => {
      endedAt = Date.now();
      return r;
    });
    // Wait until the stream is live (its proposals arrived), then revoke the key.
    const deadline = Date.now() + 10_000;
    while (!arrivals.some((a) => a.event.event === "proposed_change_batch") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(arrivals.some((a) => a.event.event === "proposed_change_batch")).toBe(true);
    expect(await stack.revokeKey(streamKey)).toBe(true);
    revokedAt = Date.now();
    // Past the TTL the job completes (approved with another key of the same account): its
    // final and usage must not reach the revoked stream.
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    const approved = await stack.call("POST", `/v1/chat/${sid}/approve`, {
      key: otherKey,
      body: { job_id: waiting.job_id, approved: true },
    });
    expect(approved.status).toBe(200);
    await waitForJob(stack, otherKey, waiting.job_id, ["completed"]);

    const read = await reading;
    expect(read.ended).toBe(true);
    // TTL, then at most one re-check period (max(500, TTL / 2)), plus slack for a loaded machine.
    expect(endedAt - revokedAt).toBeLessThan(TTL_MS + 500 + 2000);
    const names = read.events.map((e) => e.event);
    expect(names).not.toContain("final");
    expect(names).not.toContain("usage");
    expect(read.events.at(-1)).toEqual({ event: "error", data: { error: "The API key was revoked" } });
    const late = arrivals.filter((a) => a.at > revokedAt + TTL_MS + 1000 && a.event.event !== "error");
    expect(late).toEqual([]);
    // The revoked key cannot open a new stream either.
    expect((await readSse(stack, `/v1/chat/${sid}/stream?job_id=${waiting.job_id}&api_key=${streamKey}`)).status).toBe(
      401,
    );
  });
});
