// The agent's record outbox (agent.turn_records; issue #10): what a committed sync turn still
// owes when billing or sessions did not answer in time is settled and recorded by the relay, a
// repeat of a turn that did land changes nothing, a record a service refuses is dropped rather
// than retried for ever, and the next turn on the session lands an owed record first, so the
// history keeps the turns' order. (The turn that queues a row: test/faults-turn-kill.test.ts.)
import { setTimeout as sleep } from "node:timers/promises";
import { sessionsV1 } from "@redline/grpc-stubs";
import type { Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { principalOf, startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";
import { until } from "./support/until.js";

/** The relay's period here (ms): short, so the tests need not wait for it. */
const RELAY_MS = 200;

let stack: TestStack;
let key: string;
let principal: Principal;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "record_outbox", turnRecordRelayMs: RELAY_MS }, "rosa"));
  principal = await principalOf(stack, key);
});
afterAll(() => stack?.close());

/**
 * Queues an owed turn as finishSyncTurn does: its settle at `operations` and its AppendTurn; with
 * `notBefore`, the relay's own passes leave it alone until then (a row in its backoff).
 */
async function owe(
  chargeKey: string,
  operations: number,
  append: sessionsV1.AppendTurnRequest,
  notBefore?: Date,
): Promise<void> {
  await stack.agentDb("agent.turn_records").insert({
    charge_key: chargeKey,
    session_id: append.sessionId,
    operations,
    ...(notBefore ? { next_attempt_at: notBefore } : {}),
    append_request: JSON.stringify(sessionsV1.AppendTurnRequest.toJSON(append)),
    principal: JSON.stringify(principal),
    request_id: `req-${chargeKey}`,
  });
}

/** A turn's AppendTurn in `sessionId`, keyed by `chargeKey`. */
function appendOf(chargeKey: string, sessionId: string, userMessage: string, aiMessage: string) {
  return sessionsV1.AppendTurnRequest.fromPartial({ turnKey: chargeKey, sessionId, userMessage, aiMessage });
}

async function owedKeys(): Promise<string[]> {
  const rows = await stack.agentDb("agent.turn_records").select("charge_key");
  return rows.map((r: { charge_key: string }) => r.charge_key);
}

async function history(sessionId: string): Promise<{ status: number; messages: [number, string, string][] }> {
  const res = await stack.call("GET", `/v1/sessions/${sessionId}/history`, { key });
  const body = (await res.json()) as { messages?: { turn_index: number; sender: string; content: string }[] };
  return { status: res.status, messages: (body.messages ?? []).map((m) => [m.turn_index, m.sender, m.content]) };
}

const monthlyUsed = async () =>
  ((await (await stack.call("GET", "/v1/usage", { key })).json()) as { monthly_used: number }).monthly_used;

describe("record outbox relay", () => {
  it("settles and records an owed turn once, and a repeat of it changes nothing", async () => {
    const first = await stack.call("POST", "/v1/chat", { key, body: { message: "hello" } });
    expect(first.status).toBe(200);
    const sessionId = ((await first.json()) as { session_id: string }).session_id;
    const before = await history(sessionId);
    expect(before.messages).toHaveLength(2);
    // The turn's hold, as its reserve left it; the owed settle bills it.
    const chargeKey = "chat:outbox-owed-1";
    await stack.billing.reserveOperations({ chargeKey, operations: 1, holdExpiryMs: 600_000 }, { principal });
    const used = await monthlyUsed();
    await owe(chargeKey, 1, appendOf(chargeKey, sessionId, "Late question", "Late answer"));
    await until("the relay to finish the owed turn", async () => !(await owedKeys()).includes(chargeKey));
    const expected = [...before.messages, [1, "user", "Late question"], [1, "ai", "Late answer"]];
    expect((await history(sessionId)).messages).toEqual(expected);
    // The hold was counted already; settling it at 1 keeps the month's figure.
    expect(await monthlyUsed()).toBe(used);
    const settled = await stack.billing.settleOperations({ chargeKey, operations: 1 }, { principal });
    expect(settled.usage?.opsCharged).toBe(1);

    // The same debt again (a frozen call that landed late, then its repeat): one turn, one charge.
    await owe(chargeKey, 1, appendOf(chargeKey, sessionId, "Late question", "Late answer"));
    await until("the relay to finish the repeat", async () => !(await owedKeys()).includes(chargeKey));
    expect((await history(sessionId)).messages).toEqual(expected);
    expect(await monthlyUsed()).toBe(used);
  }, 60_000);

  it("drops a record its service refuses (the session is gone) instead of retrying it for ever", async () => {
    const chargeKey = "chat:outbox-refused-1";
    const missing = "sess_00000000000000000000dead";
    await owe(chargeKey, 0, appendOf(chargeKey, missing, "Lost question", "Lost answer"));
    await until("the relay to drop the refused record", async () => !(await owedKeys()).includes(chargeKey));
    expect((await history(missing)).status).toBe(404);
  }, 60_000);

  it("a turn on a session with an owed record lands that record first, so the history keeps the order", async () => {
    const first = await stack.call("POST", "/v1/chat", { key, body: { message: "first" } });
    const sessionId = ((await first.json()) as { session_id: string }).session_id;
    const chargeKey = "chat:outbox-ordered-1";
    // In its backoff for an hour: only the next turn on the session can land it now.
    await owe(
      chargeKey,
      0,
      appendOf(chargeKey, sessionId, "Owed question", "Owed answer"),
      new Date(Date.now() + 3.6e6),
    );
    // The relay's passes tell every agent which sessions are owed a record.
    await sleep(RELAY_MS * 5);
    expect(await owedKeys()).toContain(chargeKey);
    const next = await stack.call("POST", "/v1/chat", { key, body: { session_id: sessionId, message: "next" } });
    expect(next.status, await next.clone().text()).toBe(200);
    expect(await owedKeys()).not.toContain(chargeKey);
    const turns = (await history(sessionId)).messages.filter(([, sender]) => sender === "user");
    expect(turns).toEqual([
      [0, "user", "first"],
      [1, "user", "Owed question"],
      [2, "user", "next"],
    ]);
  }, 60_000);

  it("never records a session's later owed turn before an earlier one still in its backoff", async () => {
    const first = await stack.call("POST", "/v1/chat", { key, body: { message: "first" } });
    const sessionId = ((await first.json()) as { session_id: string }).session_id;
    const [older, newer] = ["chat:outbox-older-1", "chat:outbox-newer-1"];
    await owe(older, 0, appendOf(older, sessionId, "Older question", "Older answer"), new Date(Date.now() + 3.6e6));
    await owe(newer, 0, appendOf(newer, sessionId, "Newer question", "Newer answer"));
    // Due, the newer one still waits behind the older one in the relay's passes.
    await sleep(RELAY_MS * 5);
    expect((await owedKeys()).filter((k) => k === older || k === newer).sort()).toEqual([newer, older]);
    expect((await history(sessionId)).messages).toHaveLength(2);
    // The next turn lands both, oldest first.
    const next = await stack.call("POST", "/v1/chat", { key, body: { session_id: sessionId, message: "next" } });
    expect(next.status, await next.clone().text()).toBe(200);
    const turns = (await history(sessionId)).messages.filter(([, sender]) => sender === "user");
    expect(turns).toEqual([
      [0, "user", "first"],
      [1, "user", "Older question"],
      [2, "user", "Newer question"],
      [3, "user", "next"],
    ]);
  }, 60_000);
});
