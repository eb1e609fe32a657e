// The strict client's schemas must refuse what a typed client refuses, or the contract test that
// relies on them proves nothing: null strings, statuses outside the vocabulary, proposals whose
// content is not a JSON-encoded record, and a stream "ending" on anything but final/error.
import { describe, expect, it } from "vitest";
import { ChatResponse, endsStream, Job, parseStreamEvent, strictParse } from "./client-schemas.js";

const record = {
  change_id: "chg_1",
  operation: "edit",
  chunk_id: "c_1",
  document_id: "doc_1",
  old_html: "<p>a</p>",
  new_html: "<p>b</p>",
  ai_explanation: "why",
};

const usage = { monthly_used: 1, monthly_limit: 500, monthly_remaining: 499 };

const job = {
  job_id: "job_1",
  session_id: "s1",
  job_type: "chat",
  status: "completed",
  created_at: "2027-01-01T00:00:00.000Z",
  updated_at: "2027-01-01T00:00:01.000Z",
  progress: 100,
  organization_id: null,
  user_id: "u1",
  result: { response: "done", session_id: "s1", usage },
  metadata: { message: "m", document_html_provided: false },
};

const envelope = (type: string, content: unknown, sequence = 3) => ({
  id: String(sequence),
  event: type,
  data: { type, content, sequence, timestamp: "2027-01-01T00:00:00Z" },
});

describe("strict client schemas", () => {
  it("accepts a job and a chat response as the spec gives them", () => {
    expect(strictParse(Job, job, "job").status).toBe("completed");
    const chat = { response: "ok", session_id: "s1", document_changes: { chunk_diffs: [record] }, usage };
    expect(strictParse(ChatResponse, chat, "chat").document_changes?.chunk_diffs).toHaveLength(1);
  });

  it("refuses null in a string field, and null anywhere the spec does not allow it", () => {
    expect(() => strictParse(ChatResponse, { response: null, session_id: "s1", usage }, "chat")).toThrow(/response/);
    const nullDiff = {
      response: "",
      session_id: "s1",
      usage,
      document_changes: { chunk_diffs: [{ ...record, old_html: null }] },
    };
    expect(() => strictParse(ChatResponse, nullDiff, "chat")).toThrow(/old_html/);
    expect(() => strictParse(ChatResponse, { response: "", session_id: "s1", usage, extra: null }, "chat")).toThrow(
      /\$\.extra/,
    );
  });

  it("refuses a status outside the vocabulary and the spec's broken facts about a job", () => {
    expect(() => strictParse(Job, { ...job, status: "running" }, "job")).toThrow(/status/);
    expect(() => strictParse(Job, { ...job, error: null }, "job")).toThrow(/error on a completed job/);
    expect(() => strictParse(Job, { ...job, status: "failed", result: undefined }, "job")).toThrow(/without its error/);
    expect(() => strictParse(Job, { ...job, status: "pending", result: undefined, user_id: null }, "job")).toThrow(
      /exactly one/,
    );
    expect(() => strictParse(Job, { ...job, created_at: "yesterday" }, "job")).toThrow(/ISO 8601/);
  });

  it("double-parses proposals and refuses a content that is not the JSON-encoded record", () => {
    const parsed = parseStreamEvent(envelope("proposed_change", JSON.stringify(record)));
    expect(parsed).toMatchObject({ event: "proposed_change", record: { change_id: "chg_1" } });
    expect(() => parseStreamEvent(envelope("proposed_change", record))).toThrow(/content/);
    expect(() => parseStreamEvent(envelope("proposed_change", JSON.stringify({ ...record, chunk_id: null })))).toThrow(
      /chunk_id/,
    );
    const batch = { batch_id: "b1", batch_total: 2, changes: [record] };
    expect(() => parseStreamEvent(envelope("proposed_change_batch", JSON.stringify(batch)))).toThrow(/batch_total/);
  });

  it("refuses an envelope whose type, id or name is off", () => {
    const wrongType = envelope("intermediate", "text");
    wrongType.data.type = "progress";
    expect(() => parseStreamEvent(wrongType)).toThrow(/type/);
    expect(() => parseStreamEvent({ ...envelope("intermediate", "text"), id: "4" })).toThrow(/id differs/);
    expect(() => parseStreamEvent(envelope("status", "text"))).toThrow(/not in the spec/);
  });

  it("ends a stream only on final, error or a terminal data.status", () => {
    expect(endsStream({ event: "final", data: { result: {} } })).toBe(true);
    expect(endsStream({ event: "error", data: { error: "x" } })).toBe(true);
    expect(endsStream({ event: "intermediate", data: { status: "cancelled" } })).toBe(true);
    expect(endsStream({ event: "proposed_change_batch", data: {} })).toBe(false);
    expect(endsStream({ event: "intermediate", data: { status: "awaiting_approval" } })).toBe(false);
    expect(endsStream({ event: "usage", data: usage })).toBe(false);
  });
});
