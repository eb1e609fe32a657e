// `pnpm soak`: the mixed load of issue #10 against a stack of its own for a bounded time, with
// every service's memory (RSS, and heap after GC from its /metrics) sampled throughout, then a
// report and a verdict.
//
//   pnpm soak [--minutes 10] [--clients 8] [--rate 4] [--sample-seconds 5] [--json]
//
// The stack is the deployed shape (`pnpm start`: each service its own process) on free loopback
// ports over fresh embedded Postgres, NATS and S3 in a temporary directory, with the offline
// engine; nothing leaves the machine. The load (packages/local-stack/src/mixed-load/) runs `--clients`
// virtual clients, each with its own API key, at most `--rate` requests a second each. Exit
// code 0 when the verdict passes, 1 when it fails, 2 on a usage error or a run that broke.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { accountsV1 } from "@redline/grpc-stubs";
import { startLocalInfra } from "@redline/local-infra";
import {
  DEFAULT_LOOP,
  formatSoakReport,
  HeapSampler,
  type KindFigures,
  MixedLoad,
  type RequestKind,
  type RssSample,
  RssSampler,
  SERVICE_NAMES,
  type ServiceName,
  type SoakReport,
  soakVerdict,
  startProcessStack,
  summarizeRss,
} from "@redline/local-stack";
import { createRpcClient } from "@redline/service-kit";

/** The options of a run, from the command line. */
interface SoakOptions {
  minutes: number;
  clients: number;
  rate: number;
  sampleSeconds: number;
  json: boolean;
}

/** Parses argv; throws a usage message on an unknown flag or a value out of range. */
function parseSoakArgs(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: "string", default: "10" },
      clients: { type: "string", default: "8" },
      rate: { type: "string", default: "4" },
      "sample-seconds": { type: "string", default: "5" },
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const number = (name: string, raw: string, min: number, max: number) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return n;
  };
  return {
    // Bounded: at most a day; the default is the 10 minutes.
    minutes: number("minutes", values.minutes, 0.05, 24 * 60),
    clients: Math.round(number("clients", values.clients, 1, 64)),
    rate: number("rate", values.rate, 0.1, 50),
    sampleSeconds: number("sample-seconds", values["sample-seconds"], 0.5, 60),
    json: values.json,
  };
}

/** Progress for people on stderr (stdout carries the report, or the JSON). */
const progress = (line: string) => process.stderr.write(`[soak] ${line}\n`);

/** Runs one soak and returns its report. */
async function soak(opts: SoakOptions): Promise<SoakReport> {
  const dataDir = mkdtempSync(join(tmpdir(), "redline-soak-"));
  // Embedded Postgres runs as the postgres user, which must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  const infra = await startLocalInfra({ dataDir, persistent: false });
  try {
    progress("starting the stack (a process per service, loopback only)");
    const stack = await startProcessStack(infra, "soak", { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" });
    try {
      if (new URL(stack.url).hostname !== "127.0.0.1") throw new Error(`the gateway is not on loopback: ${stack.url}`);
      const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.stack.addrs.billing);
      const keys = await Promise.all(
        Array.from(
          { length: opts.clients },
          async (_, i) => (await accounts.createApiKey({ user: `soak-${i}`, organization: "", plan: "pro" })).apiKey,
        ),
      );
      accounts.close();
      const load = new MixedLoad({ url: stack.url, keys, ratePerClient: opts.rate });
      await load.setup();
      const sampler = new RssSampler(stack.stack.dataDir, opts.sampleSeconds * 1000);
      const heapSampler = new HeapSampler(stack.stack.dataDir, opts.sampleSeconds * 1000);
      const startedAt = Date.now();
      // The warm-up left out of the memory slope: JIT, pools and caches fill in the first minutes.
      const warmupMs = Math.min(2 * 60_000, opts.minutes * 60_000 * 0.25);
      sampler.start();
      heapSampler.start();
      load.start();
      progress(`load running for ${opts.minutes} min: ${opts.clients} clients at <= ${opts.rate} req/s each`);
      const endAt = startedAt + opts.minutes * 60_000;
      while (Date.now() < endAt) {
        await sleep(Math.min(30_000, endAt - Date.now()));
        const all = load.stats({ startedAt, endedAt: null }).all;
        progress(
          `${((Date.now() - startedAt) / 60_000).toFixed(1)} min: ${all.count} requests, ${all.failed} failed, p50 ${all.p50Ms} ms`,
        );
      }
      await load.stop();
      const endedAt = Date.now();
      sampler.stop();
      await heapSampler.stop();
      progress("load stopped; checking every acknowledged write");
      const verify = await load.verify();
      const seconds = (endedAt - startedAt) / 1000;
      const stats = load.stats({ startedAt, endedAt });
      const kinds: Partial<Record<RequestKind, KindFigures>> = {};
      for (const [kind, k] of Object.entries(stats)) {
        if (kind === "all" || k.count === 0) continue;
        kinds[kind as RequestKind] = {
          ...k,
          perSecond: k.count / seconds,
          acknowledgedPerSecond: k.acknowledged / seconds,
        };
      }
      const summaries = (samples: Map<ServiceName, RssSample[]>) =>
        Object.fromEntries(
          SERVICE_NAMES.map((name) => [name, summarizeRss(samples.get(name) ?? [], startedAt + warmupMs)]),
        ) as Record<ServiceName, ReturnType<typeof summarizeRss>>;
      const series = (samples: Map<ServiceName, RssSample[]>) =>
        Object.fromEntries(
          SERVICE_NAMES.map((name) => [
            name,
            (samples.get(name) ?? []).map((s) => [
              Math.round((s.at - startedAt) / 100) / 10,
              Math.round(s.kib / 102.4) / 10,
            ]),
          ]),
        ) as SoakReport["rssSamples"];
      const rss = summaries(sampler.samples);
      // A service never scraped (METRICS_ADDR=off) has no heap figure: its RSS is judged instead.
      const heap = Object.fromEntries(
        Object.entries(summaries(heapSampler.samples)).filter(([, h]) => h.samples > 0),
      ) as SoakReport["heap"];
      const partial = { kinds, errorsByStatus: stats.all.errorsByStatus, rss, heap, verify };
      return {
        minutes: opts.minutes,
        clients: opts.clients,
        ratePerClient: opts.rate,
        sampleSeconds: opts.sampleSeconds,
        startedAt: new Date(startedAt).toISOString(),
        durationSeconds: seconds,
        loadAverage: loadavg(),
        throughput: { perSecond: stats.all.count / seconds, acknowledgedPerSecond: stats.all.acknowledged / seconds },
        warmupMinutes: warmupMs / 60_000,
        ...partial,
        rssSamples: series(sampler.samples),
        heapSamples: series(heapSampler.samples),
        verdict: soakVerdict(partial, [...new Set(DEFAULT_LOOP)], {
          judgedMinutes: (endedAt - startedAt - warmupMs) / 60_000,
        }),
      };
    } finally {
      await stack.stop();
    }
  } finally {
    await infra.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  let opts: SoakOptions;
  try {
    opts = parseSoakArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(
      `${(err as Error).message}\nusage: pnpm soak [--minutes 10] [--clients 8] [--rate 4] [--sample-seconds 5] [--json]\n`,
    );
    return 2;
  }
  const report = await soak(opts);
  process.stdout.write(`${opts.json ? JSON.stringify(report, null, 2) : formatSoakReport(report)}\n`);
  return report.verdict.pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
