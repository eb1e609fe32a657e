// Hostile chat messages against the offline engine on the real stack (gateway, gRPC services,
// Postgres, NATS, S3, all on one event loop as in the test stack): the messages that used to
// keep the agent's event loop busy for seconds are answered quickly, unbilled, and another
// tenant's small request sent at the same time is not held up behind them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

const MAX_MESSAGE = 100_000;

const WORST: [string, string][] = [
  ["draft an outline for a + spaces + x", `draft an outline for a${" ".repeat(MAX_MESSAGE - 23)}x`],
  ["curly quotes", "“".repeat(MAX_MESSAGE)],
  ["alternating quotes", "“\"‘'".repeat(MAX_MESSAGE / 4)],
  ["delete section with a colon-run name", `delete section "${":".repeat(MAX_MESSAGE - 20)}x"`],
];

let stack: TestStack;
let attacker: string;
let neighbour: string;

beforeAll(async () => {
  ({ stack, key: attacker } = await startStackWithKey({ name: "offline_adversarial" }, "mallory"));
  neighbour = await stack.createKey("nadia", { org: "neighbours" });
});
afterAll(() => stack?.close());

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe("POST /v1/chat with adversarial offline messages", () => {
  it.each(WORST)("%s: answered quickly while another tenant's small chat is not stalled", async (_name, message) => {
    const hostile = timed(async () => {
      const res = await stack.call("POST", "/v1/chat", {
        key: attacker,
        body: { message, document_html: "<h1>Plan</h1><h2>Scope</h2><p>Acme delivers.</p>" },
      });
      return { status: res.status, body: (await res.json()) as { response: string; usage: { ops_charged: number } } };
    });
    // The neighbour's request starts while the hostile one is in flight.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const small = timed(async () => {
      const res = await stack.call("POST", "/v1/chat", {
        key: neighbour,
        body: { message: 'replace "Acme" with "Globex"', document_html: "<p>Acme delivers.</p>" },
      });
      return { status: res.status, body: (await res.json()) as { response: string } };
    });
    const [bad, good] = await Promise.all([hostile, small]);
    expect(bad.value.status).toBe(200);
    expect(bad.value.body.usage.ops_charged).toBe(0);
    expect(good.value.status).toBe(200);
    expect(good.value.body.response).toBe('Replaced 1 occurrence of "Acme" with "Globex" (1 block changed).');
    // Generous bounds for a loaded 2-core machine; the old parser took from seconds to minutes.
    expect(bad.ms).toBeLessThan(5_000);
    expect(good.ms).toBeLessThan(3_000);
  });
});
