// The running half of the podman adapter: plays a Plan in Kubernetes' dependency order —
// StatefulSets ready (replicas one by one), then Jobs run to completion, then Deployments
// started and probed ready — recording every container and volume in the run's ledger.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type Ledger, lastLines, podman, podmanOk } from "./podman.js";
import { waitForProbe, watchLiveness } from "./probes.js";
import { type Plan, type PlannedContainer, type PlannedPod, RUN_LABEL } from "./translate.js";

/** How one pod (or Job) of the run ended up. */
export interface PodOutcome {
  pod: PlannedPod;
  ok: boolean;
  ms: number;
  /** Why not ok, with the last lines of the container's log. */
  error?: string;
}

export interface Player {
  ledger: Ledger;
  /** Deadline of each phase, in ms. */
  phaseTimeoutMs: number;
  log: (line: string) => void;
  /** Liveness watchers of ready containers, by container name (stopped by the caller). */
  liveness: Map<string, ReturnType<typeof watchLiveness>>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes configMap/secret files and creates the named volumes of every pod. */
export async function prepare(plan: Plan, player: Player): Promise<void> {
  for (const pod of plan.pods)
    for (const f of pod.files) {
      mkdirSync(dirname(f.path), { recursive: true, mode: 0o755 });
      writeFileSync(f.path, f.content);
      chmodSync(f.path, f.mode);
    }
  const volumes = [...new Set(plan.pods.flatMap((p) => p.volumes))];
  for (const v of volumes) {
    const made = await player.ledger.create(() => {
      player.ledger.volumes.push(v);
      return podmanOk(["volume", "create", "--label", `${RUN_LABEL}=${player.ledger.runId}`, v]);
    });
    if (made === undefined) throw new Error("the run is being torn down");
  }
}

/** Images the plan needs that podman does not have (no registry is reachable: none is pulled). */
export async function missingImages(plan: Plan): Promise<string[]> {
  const images = [...new Set(plan.pods.flatMap((p) => [...p.init, ...p.containers].map((c) => c.image)))];
  const missing: string[] = [];
  for (const image of images) if ((await podman(["image", "exists", image])).code !== 0) missing.push(image);
  return missing;
}

/** StatefulSets: each set's replicas in order, each ready before the next starts; sets in parallel. */
export async function playStateful(pods: PlannedPod[], player: Player): Promise<PodOutcome[]> {
  const deadline = Date.now() + player.phaseTimeoutMs;
  const bySet = new Map<string, PlannedPod[]>();
  for (const p of pods) bySet.set(p.workload, [...(bySet.get(p.workload) ?? []), p]);
  const results = await Promise.all(
    [...bySet.values()].map(async (replicas) => {
      const out: PodOutcome[] = [];
      for (const pod of replicas) {
        const outcome = await startAndProbe(pod, player, deadline);
        out.push(outcome);
        if (!outcome.ok) break;
      }
      return out;
    }),
  );
  return results.flat();
}

/** Jobs, in parallel: each runs to exit 0, restarted up to its backoffLimit after a failure. */
export async function playJobs(pods: PlannedPod[], player: Player): Promise<PodOutcome[]> {
  const deadline = Date.now() + player.phaseTimeoutMs;
  return Promise.all(pods.map((pod) => runJob(pod, player, deadline)));
}

/** Deployments (and bare Pods): all started, then each probed ready. */
export async function playWorkloads(pods: PlannedPod[], player: Player): Promise<PodOutcome[]> {
  const deadline = Date.now() + player.phaseTimeoutMs;
  return Promise.all(pods.map((pod) => startAndProbe(pod, player, deadline)));
}

async function runJob(pod: PlannedPod, player: Player, phaseDeadline: number): Promise<PodOutcome> {
  const started = Date.now();
  const deadline = Math.min(phaseDeadline, started + (pod.activeDeadlineMs ?? Number.POSITIVE_INFINITY));
  const fail = (error: string): PodOutcome => ({ pod, ok: false, ms: Date.now() - started, error });
  const init = await runInit(pod, player);
  if (init) return fail(init);
  const c = pod.containers[0];
  if (pod.containers.length > 1) return fail("a Job with more than one container is not supported");
  const startError = await start(c, player);
  if (startError) return fail(startError);
  for (let attempt = 0; ; attempt++) {
    const code = await waitExit(c.name, deadline);
    if (code === 0) {
      player.log(`  ${pod.name}: completed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return { pod, ok: true, ms: Date.now() - started };
    }
    const why = code === undefined ? "did not finish in time" : `exited ${code}`;
    if (code === undefined || attempt >= pod.retries) return fail(`${why}\n${await logTail(c.name)}`);
    player.log(`  ${pod.name}: ${why}, retrying (${attempt + 1}/${pod.retries})`);
    await sleep(Math.min(10_000, 1000 * 2 ** attempt));
    if (!(await player.ledger.create(() => podman(["start", c.name])))) return fail("the run is being torn down");
  }
}

/** Starts the pod's init containers (each to exit 0) and containers, then waits for readiness. */
async function startAndProbe(pod: PlannedPod, player: Player, deadline: number): Promise<PodOutcome> {
  const started = Date.now();
  const fail = (error: string): PodOutcome => ({ pod, ok: false, ms: Date.now() - started, error });
  const init = await runInit(pod, player);
  if (init) return fail(init);
  for (const c of pod.containers) {
    const error = await start(c, player);
    if (error) return fail(error);
  }
  for (const c of pod.containers) {
    const { startup, readiness, liveness: live } = c.probes;
    if (startup && !(await waitForProbe(startup, pod.ip, c.name, deadline, true)))
      return fail(`${c.k8sName}: startup probe failed (the kubelet would restart it)\n${await state(c.name)}`);
    if (readiness && !(await waitForProbe(readiness, pod.ip, c.name, deadline)))
      return fail(`${c.k8sName}: not ready in time\n${await state(c.name)}`);
    if (!readiness && !(await running(c.name))) return fail(`${c.k8sName}: not running\n${await state(c.name)}`);
    if (live) player.liveness.set(c.name, watchLiveness(live, pod.ip, c.name));
  }
  player.log(`  ${pod.name}: ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${pod.ip})`);
  return { pod, ok: true, ms: Date.now() - started };
}

/** Runs init containers one by one to exit 0 and removes each (the pod's address is then free). */
async function runInit(pod: PlannedPod, player: Player): Promise<string | undefined> {
  for (const c of pod.init) {
    const error = await start(c, player);
    if (error) return error;
    const code = await waitExit(c.name, Date.now() + player.phaseTimeoutMs);
    if (code !== 0) return `init container ${c.k8sName} exited ${code ?? "(timeout)"}\n${await logTail(c.name)}`;
    await podman(["rm", "-f", "-t", "0", c.name]);
  }
  return undefined;
}

/** `podman run -d` of one container; an error string when it could not start. */
async function start(c: PlannedContainer, player: Player): Promise<string | undefined> {
  if (c.requireNonRootImage) {
    const user = (await podman(["image", "inspect", "--format", "{{.Config.User}}", c.image])).stdout.trim();
    if (!user || /^(root|0)(:|$)/.test(user)) return `${c.k8sName}: runAsNonRoot, but image ${c.image} runs as root`;
  }
  const r = await player.ledger.create(() => {
    player.ledger.containers.push(c.name);
    return podman(c.argv, { env: c.secretEnv });
  });
  if (!r) return `${c.k8sName}: not started, the run is being torn down`;
  return r.code === 0 ? undefined : `${c.k8sName}: podman run failed: ${lastLines(r.stderr, 4)}`;
}

/**
 * The container's exit code, or undefined when it has not exited by the deadline. The state is
 * read back after `podman wait`: a wait cut short by its timeout prints nothing and may exit 0.
 */
async function waitExit(name: string, deadline: number): Promise<number | undefined> {
  await podman(["wait", name], { timeoutMs: Math.max(1000, deadline - Date.now()) });
  const r = await podman(["inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name]);
  const [status, code] = r.stdout.trim().split(" ");
  return status === "exited" && /^\d+$/.test(code ?? "") ? Number(code) : undefined;
}

async function running(name: string): Promise<boolean> {
  const r = await podman(["inspect", "--format", "{{.State.Status}}", name]);
  return r.stdout.trim() === "running";
}

/** The container's state, restart count and last log lines, for a failure message. */
async function state(name: string): Promise<string> {
  const r = await podman([
    "inspect",
    "--format",
    "{{.State.Status}} exit={{.State.ExitCode}} restarts={{.RestartCount}}",
    name,
  ]);
  return `${name}: ${r.stdout.trim()}\n${await logTail(name)}`;
}

export async function logTail(name: string, n = 15): Promise<string> {
  const r = await podman(["logs", "--tail", String(n), name]);
  return lastLines(`${r.stdout}\n${r.stderr}`, n);
}
