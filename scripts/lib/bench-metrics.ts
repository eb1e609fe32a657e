// Health and metrics figures for `pnpm bench m n`.
// (n) GET /health, GET /ready and an authenticated Postgres-backed list (GET /v1/sessions, for
//     scale), in requests per second over keep-alive connections, 16 at a time.
// (m) the chat path (sync POST /v1/chat, offline engine) p50 with metrics on and off: two stacks
//     as `pnpm start` runs them, one with METRICS_ADDR=off, measured in alternating rounds so
//     drift of the machine hits both alike (target: on within 3 % of off).
import type { LocalInfra } from "@redline/local-infra";
import { startProcessStack } from "@redline/local-stack";
import { startTestStack } from "../../test/support/stack.js";
import type { BenchResult } from "./bench-ingest.js";

/** Requests per second of GET `url` with `concurrency` loops for `ms`. */
async function reqPerSecond(url: string, headers: Record<string, string>, ms = 3000, concurrency = 16) {
  const until = Date.now() + ms;
  let done = 0;
  let bad = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status === 200) done++;
        else bad++;
      }
    }),
  );
  if (bad > 0) throw new Error(`${url}: ${bad} answers were not 200`);
  return done / ((Date.now() - started) / 1000);
}

/** (l): /health, /ready and GET /v1/sessions req/s on one in-process stack. */
export async function benchHealth(results: BenchResult[], infra: LocalInfra): Promise<void> {
  const stack = await startTestStack(infra, { name: "bench_health" });
  try {
    const key = await stack.createKey("bench-health");
    const auth = { Authorization: `Bearer ${key}` };
    // Warm-up of each path: connections, JIT, the auth cache.
    for (const [path, headers] of [
      ["/health", {}],
      ["/ready", {}],
      ["/v1/sessions", auth],
    ] as const)
      await reqPerSecond(`${stack.url}${path}`, headers, 1000);
    // Two passes in alternating order, the better of each: the machine is shared.
    const best = { health: 0, ready: 0, list: 0 };
    for (const pass of [0, 1]) {
      const order = pass === 0 ? (["health", "ready", "list"] as const) : (["list", "ready", "health"] as const);
      for (const which of order) {
        const [path, headers] = which === "list" ? ["/v1/sessions", auth] : [`/${which}`, {}];
        best[which] = Math.max(best[which], await reqPerSecond(`${stack.url}${path}`, headers));
      }
    }
    const { health, ready, list } = best;
    results.push({
      name: "(n) probes: req/s, 16 keep-alive connections, 3 s each (GET /v1/sessions reads Postgres, for scale)",
      value: `/health ${health.toFixed(0)} req/s, /ready ${ready.toFixed(0)} req/s, GET /v1/sessions ${list.toFixed(0)} req/s`,
      target: "/health and /ready >= the authenticated list",
      pass: health >= list && ready >= list,
    });
  } finally {
    await stack.close();
  }
}

/** A `pnpm start` stack on free ports over a fresh database; METRICS_ADDR=off when `off`. */
async function processStack(infra: LocalInfra, name: string, off: boolean) {
  const deployed = await startProcessStack(infra, name, {
    OPENAI_BASE_URL: "",
    OPENAI_API_KEY: "",
    METRICS_ADDR: off ? "off" : "",
  });
  const { stack, key: apiKey } = deployed;
  return {
    stack,
    async chat(): Promise<number> {
      const started = performance.now();
      const res = await fetch(`${stack.gatewayUrl}/v1/chat`, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          message: 'replace "alpha" with "omega"',
          document_html: "<h1>Terms</h1><p>The alpha release ships soon.</p><p>Second paragraph.</p>",
        }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`chat failed: ${res.status}`);
      return performance.now() - started;
    },
    close: () => deployed.stop(),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** (m): chat p50 with metrics on vs off, alternating rounds on two process stacks. */
export async function benchMetricsOverhead(results: BenchResult[], infra: LocalInfra): Promise<void> {
  const on = await processStack(infra, "bench_metrics_on", false);
  const off = await processStack(infra, "bench_metrics_off", true);
  try {
    const rounds = 10;
    const perRound = 20;
    const times = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < 10; i++) await Promise.all([on.chat(), off.chat()]); // warm-up
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so neither always runs on a just-warmed machine.
      const order = r % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const side of order) {
        const target = side === "on" ? on : off;
        for (let i = 0; i < perRound; i++) times[side].push(await target.chat());
      }
    }
    const pOn = median(times.on);
    const pOff = median(times.off);
    const overhead = (pOn / pOff - 1) * 100;
    results.push({
      name: `(m) metrics overhead on the chat path: sync POST /v1/chat (offline engine), ${rounds * perRound} turns each, separate processes`,
      value: `p50 on ${pOn.toFixed(2)} ms, off ${pOff.toFixed(2)} ms: ${overhead >= 0 ? "+" : ""}${overhead.toFixed(1)} %`,
      target: "< 3 % of p50",
      pass: overhead < 3,
    });
  } finally {
    await on.close();
    await off.close();
  }
}
