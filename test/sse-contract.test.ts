// The progress stream as a strict typed client reads it (unshown-parts.md, "Progress stream (SSE)",
// wire envelope): the data of document_sync, intermediate, proposed_change and
// proposed_change_batch is `{type, content, sequence, timestamp}` with `content` a string (for
// proposals the JSON-encoded change record or batch), no field is null, and the change records
// carry the same fields as REST's pending_changes. Also: the Bearer scheme in any case.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import { ADD_SECTION, readSse, type SseEvent, startJob, waitForJob } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "sse-contract", streamHeartbeatMs: 200 }, "sse-contract"));
});
afterAll(() => stack?.close());

const ENVELOPE_EVENTS = ["document_sync", "intermediate", "proposed_change", "proposed_change_batch"];

/** The fields of a change record a typed client declares (string unless noted). */
const RECORD_STRINGS = ["change_id", "operation", "chunk_id", "document_id", "old_html", "new_html", "ai_explanation"];

/** Paths of every null anywhere in `value` (typed clients reject null for string fields). */
function nullPaths(value: unknown, path = "$"): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (typeof value === "object") return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

/**
 * Asserts `e`'s data is exactly the envelope: `type` the event name, `sequence` a number equal
 * to the SSE id, `timestamp` an ISO 8601 date, `content` a string; returns the content.
 */
function envelopeContent(e: SseEvent): string {
  const { data } = e;
  expect(data.type).toBe(e.event);
  expect(typeof data.sequence).toBe("number");
  expect(data.sequence).toBe(Number(e.id));
  expect(typeof data.timestamp).toBe("string");
  expect(Number.isNaN(Date.parse(String(data.timestamp)))).toBe(false);
  expect(String(data.timestamp)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  expect(typeof data.content).toBe("string");
  expect(nullPaths(data)).toEqual([]);
  return data.content as string;
}

/** Asserts `value` is a change record as a typed client declares it; returns it. */
function changeRecord(value: unknown): Record<string, unknown> {
  expect(typeof value).toBe("object");
  const record = value as Record<string, unknown>;
  for (const field of RECORD_STRINGS) expect(typeof record[field], field).toBe("string");
  expect(["edit", "create", "delete"]).toContain(record.operation);
  if (record.operation !== "create") expect(record).not.toHaveProperty("insert_after_chunk_id");
  if ("insert_after_chunk_id" in record) expect(typeof record.insert_after_chunk_id).toBe("string");
  expect(nullPaths(record)).toEqual([]);
  return record;
}

describe("progress stream wire envelope", () => {
  it("sends the four envelope events as a strict client parses them, then final after approve + deny", async () => {
    const created = await startJob(stack, key, {
      message: ADD_SECTION,
      document_html: sampleContract(),
      approval_mode: "ask_every_time",
    });
    expect(created.status).toBe(202);
    const { job_id: jobId, session_id: sid } = created.body;
    const path = `/v1/chat/${sid}/stream?job_id=${jobId}`;
    // Lower-case scheme on the stream itself, as published clients send it.
    const first = await readSse(stack, path, {
      headers: { Authorization: `bearer ${key}` },
      stopAfter: (e) => e.event === "proposed_change_batch",
      timeoutMs: 20_000,
    });
    expect(first.status).toBe(200);
    const names = first.events.map((e) => e.event);
    for (const name of ENVELOPE_EVENTS) expect(names, name).toContain(name);
    expect(names.at(-1)).toBe("proposed_change_batch");

    const sync = first.events.find((e) => e.event === "document_sync") as SseEvent;
    expect(envelopeContent(sync)).toContain("data-chunk-id");
    for (const e of first.events.filter((x) => x.event === "intermediate")) {
      expect(envelopeContent(e).length).toBeGreaterThan(0);
    }

    // proposed_change: JSON.parse(JSON.parse(data).content) is the change record.
    const proposals = first.events.filter((e) => e.event === "proposed_change");
    expect(proposals).toHaveLength(2);
    const records = proposals.map((e) => {
      const record = changeRecord(JSON.parse(envelopeContent(e)));
      // The record's fields repeated at the top level agree with the content.
      expect(e.data).toMatchObject(record);
      return record;
    });
    const batchEvent = first.events.at(-1) as SseEvent;
    const batch = JSON.parse(envelopeContent(batchEvent)) as {
      batch_id: string;
      batch_total: number;
      changes: unknown[];
    };
    expect(typeof batch.batch_id).toBe("string");
    expect(batch.batch_total).toBe(2);
    expect(batch.changes.map(changeRecord)).toEqual(records);
    expect(records.every((r) => r.batch_id === batch.batch_id && r.batch_total === 2)).toBe(true);

    // REST's pending_changes carry the same records, field for field.
    const waiting = await waitForJob(stack, key, jobId, ["awaiting_approval"]);
    const pending = (waiting.metadata.pending_changes ?? []) as unknown as Record<string, unknown>[];
    const byId = (rs: Record<string, unknown>[]) =>
      [...rs].sort((a, b) => String(a.change_id).localeCompare(String(b.change_id)));
    expect(byId(pending)).toEqual(byId(records));
    // GET /v1/jobs/{id} lists the same events with the same string content.
    const stored = waiting.metadata.intermediate_responses ?? [];
    for (const e of first.events) {
      const s = stored.find((x) => x.sequence === Number(e.id));
      expect(s?.content).toBe(e.data.content);
    }

    // A replay (reconnect from 0 with the key in the query) carries the same envelopes.
    const replay = await readSse(stack, `${path}&api_key=${key}`, {
      stopAfter: (e) => e.event === "proposed_change_batch",
      timeoutMs: 10_000,
    });
    expect(replay.events.map((e) => e.data)).toEqual(first.events.map((e) => e.data));

    // Approve one, deny the other; the stream goes on to final + usage.
    const [approved, denied] = records;
    const decide = async (body: Record<string, unknown>) => {
      const res = await stack.call("POST", `/v1/chat/${sid}/approve`, { key, body: { job_id: jobId, ...body } });
      expect(res.status).toBe(200);
    };
    const rest = readSse(stack, `${path}&last_sequence=${batchEvent.id}`, {
      headers: { Authorization: `BEARER ${key}` },
      timeoutMs: 20_000,
    });
    await decide({ approved: true, change_id: approved.change_id });
    await decide({ approved: false, change_id: denied.change_id, feedback: "Not this one" });
    const tail = await rest;
    expect(tail.ended).toBe(true);
    expect(tail.events.map((e) => e.event).slice(-2)).toEqual(["final", "usage"]);
    const final = tail.events.at(-2)?.data as { result: { session_id: string; response: string } };
    expect(final.result.session_id).toBe(sid);
    expect(final.result.response).toContain("Not this one");
  });
});

describe("Bearer scheme case", () => {
  it.each(["Bearer", "bearer", "BEARER"])("accepts %s on an authenticated endpoint", async (scheme) => {
    const res = await stack.call("GET", "/v1/sessions", { headers: { Authorization: `${scheme} ${key}` } });
    expect(res.status).toBe(200);
  });

  it("still refuses another scheme", async () => {
    const res = await stack.call("GET", "/v1/sessions", { headers: { Authorization: `Basic ${key}` } });
    expect(res.status).toBe(401);
  });
});
