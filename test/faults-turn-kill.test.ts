// Issue #10, a turn cut by kill -9 on a process stack as `pnpm start` runs it (the model is the
// scripted OpenAI server, so each turn can be held inside its model call):
// - the agent killed mid sync chat leaves a 1-operation hold in billing; the hold expires
//   (SYNC_HOLD_EXPIRY_MS, short here) and billing's sweep releases it, so GET /v1/usage charges
//   nothing for the lost turn;
// - sessions killed while a turn runs: the agent waits it out and records the turn (AppendTurn,
//   idempotent per turn key), so the turn's messages appear exactly once;
// - sessions frozen (SIGSTOP) past the agent's wait after a turn's model call: the turn is answered
//   200 all the same (a 5xx would be retried into a second turn) and its record, owed to the
//   agent's record outbox, lands exactly once when sessions answers again.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv } from "@redline/local-infra";
import { freeStackEnv, killAndAwaitRestart, type RunningStack, servicePid, startStack } from "@redline/local-stack";
import { createDb, createRpcClient, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { delayed, type ScriptedOpenAi, startScriptedOpenAi } from "./support/scripted-openai.js";
import { until } from "./support/until.js";

/** The AI cap and the sync hold's expiry of the agents here (ms): short, so the test sees the sweep. */
const AI_TIMEOUT_MS = 4_000;
const SYNC_HOLD_EXPIRY_MS = 6_000;
/** How long a committed turn waits for its record before leaving it to the outbox, and the relay's period (ms). */
const TURN_RECORD_WAIT_MS = 5_000;
const TURN_RECORD_RELAY_MS = 300;

const infra = inject("infra");
const dataDir = mkdtempSync(join(os.tmpdir(), "redline-turn-kill-"));
chmodSync(dataDir, 0o755);
let stack: RunningStack | undefined;
let model: ScriptedOpenAi | undefined;
let key = "";
let agentDb: Knex | undefined;
const stackLog: string[] = [];

beforeAll(async () => {
  model = await startScriptedOpenAi();
  const databaseUrl = await createTestDatabase(infra.databaseUrl, "faults_turn_kill");
  agentDb = createDb(databaseUrl, "agent", 2);
  stack = await startStack({
    dataDir,
    log: (line) => stackLog.push(line),
    // Six tsx services starting at once on a busy machine: more than the 60 s default.
    healthTimeoutMs: 150_000,
    env: {
      ...process.env,
      ...(await freeStackEnv()),
      ...infraEnv({ ...infra, databaseUrl }),
      LOG_LEVEL: "warn",
      METRICS_ADDR: "off",
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "test-key",
      OPENAI_MODEL: "scripted",
      OPENAI_MAX_STEPS: "4",
      AI_TIMEOUT_MS: String(AI_TIMEOUT_MS),
      SYNC_HOLD_EXPIRY_MS: String(SYNC_HOLD_EXPIRY_MS),
      HOLD_SWEEP_MS: "300",
      TURN_RECORD_WAIT_MS: String(TURN_RECORD_WAIT_MS),
      TURN_RECORD_RELAY_MS: String(TURN_RECORD_RELAY_MS),
    },
  });
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
  try {
    key = (await accounts.createApiKey({ user: "turn-kill", organization: "", plan: "pro" })).apiKey;
  } finally {
    accounts.close();
  }
}, 240_000);

afterAll(async () => {
  await agentDb?.destroy();
  await stack?.stop();
  await model?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** A gateway answer: the status and the parsed JSON body (null when empty). */
// biome-ignore lint/suspicious/noExplicitAny: the tests read the spec's wire shapes field by field.
type Answer = { status: number; body: any };

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${(stack as RunningStack).gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * POST /v1/chat as a real client does: a 502/503 (the gateway's channel to a restarted service
 * reconnecting) is retried after a pause, for up to 30 s; any other answer is returned.
 */
async function chat(body: unknown): Promise<Answer> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await call("POST", "/v1/chat", body);
    if (![502, 503].includes(res.status) || Date.now() > deadline) return res;
    await sleep(500);
  }
}

const monthlyUsed = async () => Number((await call("GET", "/v1/usage")).body.monthly_used);

/** until() naming the stack's last log lines on a timeout. */
const untilLogged = (what: string, probe: () => Promise<boolean>, timeoutMs: number) =>
  until(what, probe, timeoutMs, () => stackLog.slice(-15).join("\n"));

describe("kill -9 mid-turn", () => {
  it("agent killed mid sync chat: the hold expires and is released, no operation charged", async () => {
    const m = model as ScriptedOpenAi;
    const before = m.requests.length;
    m.push(delayed(60_000, { content: "never delivered" }));
    const used = await monthlyUsed();
    const pending = call("POST", "/v1/chat", { message: "Say hello", session_id: "turn-kill-agent" });
    await untilLogged("the agent to call the model", async () => m.requests.length > before, 30_000);
    // The turn holds its operation while the model works.
    expect(await monthlyUsed()).toBe(used + 1);
    const restart = await killAndAwaitRestart(stack as RunningStack, "agent");
    const answer = await pending;
    expect([502, 503, 504]).toContain(answer.status);
    expect(restart.newPid, "agent not restarted").not.toBeNull();
    // No agent will settle the lost turn: billing's sweep releases its hold once it expires.
    await untilLogged(
      "the hold to be released",
      async () => (await monthlyUsed()) === used,
      SYNC_HOLD_EXPIRY_MS + 20_000,
    );
    const usage = (await call("GET", "/v1/usage")).body;
    const held = (usage.recent_charges ?? []).filter((c: { state: string }) => c.state === "reserved");
    expect(held).toEqual([]);
    // A turn after the restart is charged as usual: one operation.
    m.push({ content: "Hello again." });
    const next = await chat({ message: "Say hello again", session_id: "turn-kill-agent" });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.response).toBe("Hello again.");
    expect(await monthlyUsed()).toBe(used + next.body.usage.ops_charged);
  }, 120_000);

  it("sessions killed during a turn: the turn's messages are recorded exactly once", async () => {
    const m = model as ScriptedOpenAi;
    const sid = "turn-kill-sessions";
    m.push({ content: "First answer." });
    const first = await chat({ message: "First", session_id: sid });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const before = m.requests.length;
    // Held in its model call long enough for sessions to be killed; it answers while sessions is
    // down or restarting, so the turn's AppendTurn meets an unavailable sessions and is retried.
    m.push(delayed(1_500, { content: "Second answer." }));
    const pending = call("POST", "/v1/chat", { message: "Second", session_id: sid });
    await untilLogged("the agent to call the model", async () => m.requests.length > before, 30_000);
    const restart = await killAndAwaitRestart(stack as RunningStack, "sessions");
    expect(restart.newPid, "sessions not restarted").not.toBeNull();
    const answer = await pending;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.response).toBe("Second answer.");
    // Recorded while the turn waited, or by the record outbox when the restart outlasted the wait.
    await untilLogged("the turn to be recorded", async () => (await historyOf(sid)).length >= 4, 20_000);
    expect(await historyOf(sid)).toEqual([
      [0, "user", "First"],
      [0, "ai", "First answer."],
      [1, "user", "Second"],
      [1, "ai", "Second answer."],
    ]);
  }, 120_000);

  it("sessions frozen past the agent's wait: the turn is answered, and recorded once when sessions is back", async () => {
    const m = model as ScriptedOpenAi;
    const sid = "turn-freeze-sessions";
    m.push({ content: "First answer." });
    const first = await chat({ message: "First", session_id: sid });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const used = await monthlyUsed();
    const before = m.requests.length;
    // Sessions is frozen while the model works: the turn's AppendTurn meets a service that takes
    // the call and never answers (no UNAVAILABLE to retry on), as a stalled process or node does.
    m.push(delayed(1_000, { content: "Second answer." }));
    const started = Date.now();
    const pending = call("POST", "/v1/chat", { message: "Second", session_id: sid });
    await untilLogged("the agent to call the model", async () => m.requests.length > before, 30_000);
    const pid = servicePid(stack as RunningStack, "sessions");
    process.kill(pid, "SIGSTOP");
    let charged = 0;
    try {
      const answer = await pending;
      const tookMs = Date.now() - started;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.response).toBe("Second answer.");
      // It waited for its record no longer than its wait (plus the model's second), well inside
      // the gateway's deadline, and was charged once, as billing answered.
      expect(tookMs).toBeGreaterThanOrEqual(TURN_RECORD_WAIT_MS);
      expect(tookMs).toBeLessThan(TURN_RECORD_WAIT_MS + 8_000);
      charged = answer.body.usage.ops_charged;
      expect(await monthlyUsed()).toBe(used + charged);
      const owed = await (agentDb as Knex)("agent.turn_records").select("charge_key", "operations");
      expect(owed).toHaveLength(1);
      expect(owed[0].charge_key).toMatch(/^chat:/);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await untilLogged("the outbox to record the turn", async () => (await historyOf(sid)).length >= 4, 30_000);
    const expected = [
      [0, "user", "First"],
      [0, "ai", "First answer."],
      [1, "user", "Second"],
      [1, "ai", "Second answer."],
    ];
    expect(await historyOf(sid)).toEqual(expected);
    await untilLogged(
      "the outbox to empty",
      async () => (await (agentDb as Knex)("agent.turn_records").count<{ n: string }[]>({ n: "*" }))[0].n === "0",
      10_000,
    );
    // The frozen AppendTurn, answered late, and the relay's repeat of it recorded one turn.
    await sleep(TURN_RECORD_RELAY_MS * 5);
    expect(await historyOf(sid)).toEqual(expected);
    // The relay's settle of an already settled charge changed nothing.
    expect(await monthlyUsed()).toBe(used + charged);
  }, 120_000);
});

/** The session's history as [turn_index, sender, content] rows; [] while sessions cannot answer. */
async function historyOf(sid: string): Promise<[number, string, string][]> {
  const history = await call("GET", `/v1/sessions/${sid}/history`);
  if (history.status !== 200) return [];
  return history.body.messages.map((x: { turn_index: number; sender: string; content: string }) => [
    x.turn_index,
    x.sender,
    x.content,
  ]);
}
