// `pnpm k8s:smoke`: builds the images (`pnpm images`), renders the dev overlay unmodified with
// `kubectl kustomize`, plays it on rootful podman through the adapter (translate.ts, play.ts),
// runs the checks of checks.ts through the gateway replicas, and tears everything down even on
// failure or a signal. The last line is `N passed, N failed`; the exit code is 1 on any failure.
// Options: --overlay DIR (default deploy/k8s/overlays/dev; env K8S_SMOKE_OVERLAY),
// K8S_SMOKE_SLOW_CHUNKS (paragraphs of the agent-loss document), K8S_SMOKE_PHASE_TIMEOUT_S.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { redlineChecks } from "./checks.js";
import { parseObjects, renderOverlay } from "./manifests.js";
import { missingImages, type Player, type PodOutcome, playJobs, playStateful, playWorkloads, prepare } from "./play.js";
import { Ledger, lastLines, podman, podmanOk } from "./podman.js";
import { type PlannedPod, planRun, RUN_LABEL, type RunNames } from "./translate.js";

const REPO = resolve(import.meta.dirname, "../..");
const argOverlay = process.argv.indexOf("--overlay");
const OVERLAY = resolve(
  argOverlay >= 0
    ? process.argv[argOverlay + 1]
    : (process.env.K8S_SMOKE_OVERLAY ?? join(REPO, "deploy/k8s/overlays/dev")),
);
const PHASE_TIMEOUT_MS = Number(process.env.K8S_SMOKE_PHASE_TIMEOUT_S ?? 240) * 1000;
const SLOW_CHUNKS = Number(process.env.K8S_SMOKE_SLOW_CHUNKS ?? 20_000);
const LOG_DIR = join(REPO, ".redline", "k8s-smoke");

const runId = randomBytes(3).toString("hex");
const prefix = `redline-smoke-${runId}`;
const ledger = new Ledger(runId);
const results: { name: string; ok: boolean; detail: string }[] = [];
const timings: [string, number][] = [];
const started = Date.now();
const log = (line: string) => console.log(line);

function record(name: string, ok: boolean, detail = "") {
  results.push({ name, ok, detail });
  const lines = detail.split("\n");
  log(`${ok ? "✓" : "✗"} ${name}${lines[0] ? ` — ${lines[0]}` : ""}`);
  for (const l of lines.slice(1)) if (l.trim()) log(`    ${l}`);
}

/** Runs `fn` as a timed phase; its failure is thrown on after being timed. */
async function phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  log(`\n== ${name}`);
  try {
    return await fn();
  } finally {
    timings.push([name, Date.now() - t]);
  }
}

/** Records one check per workload from its pods' outcomes; returns the pods that made it. */
function recordOutcomes(
  kind: string,
  outcomes: PodOutcome[],
  planned: PlannedPod[],
  notStarted = "not started (an earlier replica failed)",
): PlannedPod[] {
  const byWorkload = new Map<string, PlannedPod[]>();
  for (const p of planned) byWorkload.set(p.workload, [...(byWorkload.get(p.workload) ?? []), p]);
  for (const [workload, pods] of byWorkload) {
    const mine = outcomes.filter((o) => o.pod.workload === workload);
    const bad = mine.find((o) => !o.ok);
    const verb = kind === "Job" ? "completed" : "ready";
    if (!bad && mine.length === pods.length)
      record(
        `${kind} ${workload}: ${pods.length > 1 ? `${pods.length} replicas ` : ""}${verb}`,
        true,
        `${(Math.max(...mine.map((o) => o.ms)) / 1000).toFixed(1)} s`,
      );
    else record(`${kind} ${workload}: ${verb}`, false, bad?.error ?? notStarted);
  }
  return outcomes.filter((o) => o.ok).map((o) => o.pod);
}

let player: Player | undefined;
/** Names of the checks through the gateway; those never reached count as failed ("not run"). */
const CHECK_NAMES = redlineChecks({ runId, pods: [], slowChunks: 0, log, forget: async () => {} }).map(([n]) => n);
let finishing: Promise<void> | undefined;

/** Stops probes, saves every container's log, tears the run down, prints timings and the summary line. */
function finish(): Promise<void> {
  finishing ??= (async () => {
    const reached = new Set(results.map((r) => r.name));
    const blocked = results.find((r) => !r.ok)?.name ?? "an earlier step";
    for (const name of CHECK_NAMES) if (!reached.has(name)) record(name, false, `not run: blocked by "${blocked}"`);
    await phase("teardown", async () => {
      let liveKills = 0;
      for (const [name, w] of player?.liveness ?? []) {
        const kills = w.stop();
        if (kills > 0) log(`  liveness of ${name} failed ${kills} time(s)`);
        liveKills += kills;
      }
      if (player && player.liveness.size > 0)
        record("liveness probes held while the checks ran", liveKills === 0, `${player.liveness.size} watched`);
      mkdirSync(LOG_DIR, { recursive: true });
      for (const name of ledger.containers) {
        const r = await podman(["logs", name]);
        if (r.code === 0)
          writeFileSync(join(LOG_DIR, `${name.slice(prefix.length + 1)}.log`), `${r.stdout}${r.stderr}`);
      }
      const removing = Date.now();
      const left = await ledger.teardown();
      log(`  removed ${ledger.containers.length} containers in ${((Date.now() - removing) / 1000).toFixed(1)} s`);
      record("teardown removed every container, volume and the network of the run", left.length === 0, left.join(", "));
    });
    const total = Date.now() - started;
    log(
      `\nlogs in ${LOG_DIR}; phases: ${timings.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)} s`).join(", ")}; total ${(total / 1000).toFixed(1)} s`,
    );
    const failed = results.filter((r) => !r.ok).length;
    console.log(`${results.length - failed} passed, ${failed} failed`);
    process.exitCode = failed > 0 ? 1 : 0;
  })();
  return finishing;
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(sig, () => {
    record(`interrupted by ${sig}`, false);
    void finish().then(() => process.exit(130));
  });

async function main(): Promise<void> {
  log(`k8s smoke ${runId}: overlay ${OVERLAY}`);
  rmSync(LOG_DIR, { recursive: true, force: true });
  const objects = await phase("render", async () => {
    try {
      const objs = parseObjects(await renderOverlay(OVERLAY));
      record("dev overlay renders with kubectl kustomize", true, `${objs.length} objects`);
      return objs;
    } catch (err) {
      record("dev overlay renders with kubectl kustomize", false, lastLines(String((err as Error).message), 4));
      return undefined;
    }
  });

  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const built = await phase("images", async () => {
    if (!pkg.scripts?.images) {
      log("  no `images` script yet: using the images podman already has");
      return true;
    }
    mkdirSync(LOG_DIR, { recursive: true });
    const out: string[] = [];
    const child = spawn("pnpm", ["--silent", "images"], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => out.push(String(d)));
    child.stderr.on("data", (d) => out.push(String(d)));
    const code = await new Promise<number>((done) => child.on("close", (c) => done(c ?? 1)));
    writeFileSync(join(LOG_DIR, "images.log"), out.join(""));
    record("pnpm images builds the images", code === 0, code === 0 ? "" : lastLines(out.join(""), 6));
    return code === 0;
  });
  if (!objects || !built) return;

  const network = prefix;
  const made = await ledger.create(() => {
    ledger.network = network;
    return podmanOk(["network", "create", "--label", `${RUN_LABEL}=${runId}`, network]);
  });
  if (made === undefined) return;
  const subnet = await podmanOk(["network", "inspect", "--format", "{{range .Subnets}}{{.Subnet}} {{end}}", network]);
  ledger.filesDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const names: RunNames = { id: runId, prefix, network, subnet: subnet.split(" ")[0], filesDir: ledger.filesDir };
  const plan = planRun(objects, names);
  for (const note of plan.notes) log(`  ${note}`);
  record(
    "every workload translates to podman (no unsupported field)",
    plan.problems.length === 0,
    plan.problems.length ? plan.problems.join("\n") : `${plan.pods.length} pods on ${network} (${names.subnet})`,
  );
  const missing = await missingImages(plan);
  record(
    "every image the overlay names exists locally",
    missing.length === 0,
    missing.length ? `missing: ${missing.join(", ")}` : "",
  );
  if (plan.problems.length > 0 || missing.length > 0) return;

  player = { ledger, phaseTimeoutMs: PHASE_TIMEOUT_MS, log, liveness: new Map() };
  const p = player;
  await prepare(plan, p);
  const of = (phaseName: string) => plan.pods.filter((pod) => pod.phase === phaseName);
  const ready: PlannedPod[] = [];
  const stateful = await phase("statefulsets", async () => playStateful(of("stateful"), p));
  ready.push(...recordOutcomes("StatefulSet", stateful, of("stateful")));
  // A failed phase leaves the later ones unplayed: each of their workloads counts as not run.
  const skip = (...kinds: [string, string][]) => {
    for (const [kind, ph] of kinds) recordOutcomes(kind, [], of(ph), "not run: an earlier phase failed");
  };
  if (stateful.some((o) => !o.ok)) return skip(["Job", "job"], ["Deployment", "workload"]);
  const jobs = await phase("jobs", async () => playJobs(of("job"), p));
  recordOutcomes("Job", jobs, of("job"));
  if (jobs.some((o) => !o.ok)) return skip(["Deployment", "workload"]);
  const workloads = await phase("deployments", async () => playWorkloads(of("workload"), p));
  ready.push(...recordOutcomes("Deployment", workloads, of("workload")));
  if (workloads.some((o) => !o.ok)) return;

  await phase("checks", async () => {
    const checks = redlineChecks({
      runId,
      pods: ready,
      slowChunks: SLOW_CHUNKS,
      log,
      forget: async (pod) => {
        for (const c of pod.containers) {
          p.liveness.get(c.name)?.stop();
          p.liveness.delete(c.name);
        }
      },
    });
    for (const [name, run] of checks) {
      const t = Date.now();
      try {
        const detail = await run();
        record(name, true, `${detail ?? ""} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
      } catch (err) {
        record(name, false, (err as Error).message);
      }
    }
  });
}

try {
  await main();
} catch (err) {
  record("the smoke ran to its end", false, (err as Error).stack ?? String(err));
} finally {
  await finish();
}
