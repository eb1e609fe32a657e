// Approval that ends (issue 36 part 4): a job nobody decides on within APPROVAL_TIMEOUT_S (2 s
// here) fails with an error that says so, its staged changes dropped, its stream ended with
// `error`, and its one-operation hold released.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { getJob, readSse, startJobAwaitingApproval, waitForJob } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey(
    { name: "approval_timeout", jobs: { approvalTimeoutMs: 2000, sweepMs: 300 }, streamHeartbeatMs: 200 },
    "alice",
  ));
});
afterAll(() => stack?.close());

interface UsageJson {
  monthly_used: number;
  recent_charges?: { ops: number; state: string }[];
}

async function usage(): Promise<UsageJson> {
  const res = await stack.call("GET", "/v1/usage", { key });
  expect(res.status).toBe(200);
  return (await res.json()) as UsageJson;
}

describe("approval timeout", () => {
  it("fails a job left awaiting approval: error says why, stream ends with error, nothing held or charged", async () => {
    const before = await usage();
    const startedAt = Date.now();
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    expect(waiting.metadata.pending_changes).toHaveLength(2);
    // While it waits, the job holds its operation.
    const waitingUsage = await usage();
    expect((waitingUsage.recent_charges ?? []).filter((c) => c.state === "reserved")).toHaveLength(1);
    // The open stream is told when the wait ends, and then closes.
    const stream = readSse(stack, `/v1/chat/${sid}/stream?job_id=${waiting.job_id}&api_key=${key}`, {
      timeoutMs: 15_000,
    });

    const failed = await waitForJob(stack, key, waiting.job_id, ["failed", "completed", "cancelled"], 15_000);
    expect(failed.status).toBe("failed");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2000);
    const error = "Approval timed out after 2 s: nobody approved or denied the pending changes, so they were discarded";
    expect(failed.error).toBe(error);
    expect(failed.metadata.pending_changes).toBeUndefined();
    expect(failed.metadata.awaiting_kind).toBeUndefined();
    expect(failed).not.toHaveProperty("result");

    const { status, body } = await getJob(stack, key, waiting.job_id);
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "failed", error });

    const read = await stream;
    expect(read.events.at(-1)).toEqual({ id: expect.any(String), event: "error", data: { error } });
    expect(read.ended).toBe(true);

    // Staged, never committed: the document is as it was.
    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    const state = ((await history.json()) as { document_state: { html_content?: string } | null }).document_state;
    expect(state?.html_content ?? "").not.toContain("Liability");

    // The job's hold is released: no operation reserved, nothing charged.
    const after = await usage();
    expect(after.monthly_used).toBe(before.monthly_used);
    expect((after.recent_charges ?? []).filter((c) => c.state === "reserved")).toEqual([]);

    // A decision after the expiry is refused: the job no longer waits.
    const late = await stack.call("POST", `/v1/chat/${sid}/approve`, {
      key,
      body: { job_id: waiting.job_id, approved: true },
    });
    expect(late.status).toBe(409);
  }, 40_000);

  it("keeps and bills a change approved before the wait ran out, and drops the rest", async () => {
    const before = await usage();
    const { sid, waiting } = await startJobAwaitingApproval(stack, key);
    const heading = waiting.metadata.pending_changes?.find((c) => c.new_html.includes("<h2"));
    // Decided well inside the 2 s wait (which a partial decision does not restart).
    const decided = await stack.call("POST", `/v1/chat/${sid}/approve`, {
      key,
      body: { job_id: waiting.job_id, approved: true, change_id: heading?.change_id },
    });
    expect(decided.status).toBe(200);

    const failed = await waitForJob(stack, key, waiting.job_id, ["failed", "completed", "cancelled"], 15_000);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^Approval timed out after 2 s/);
    expect(failed.metadata.pending_changes).toBeUndefined();
    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    const html = ((await history.json()) as { document_state: { html_content?: string } | null }).document_state
      ?.html_content;
    expect(html).toContain("Liability</h2>");
    expect(html).not.toContain("Liability is capped.");
    // The applied change is billed (one operation); nothing stays held.
    const after = await usage();
    expect(after.monthly_used).toBe(before.monthly_used + 1);
    expect((after.recent_charges ?? []).filter((c) => c.state === "reserved")).toEqual([]);
  }, 40_000);
});
