// Probes as the kubelet runs them, run by the smoke itself (podman runs none without systemd):
// HTTP GET, grpc.health.v1 Check, TCP connect and exec, always against the pod's own address on
// the run's network, with the manifest's delay, period, timeout and thresholds.
import { connect } from "node:net";
import { healthV1 } from "@redline/grpc-stubs";
import { createRpcClient } from "@redline/service-kit";
import { podman } from "./podman.js";
import type { PlannedProbe } from "./translate.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One probe attempt: resolves true on success, false on failure or timeout. */
export async function probeOnce(probe: PlannedProbe, ip: string, container: string): Promise<boolean> {
  const a = probe.action;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), probe.timeoutMs);
  });
  const attempt = (async () => {
    if (a.type === "http") {
      const res = await fetch(`${a.scheme}://${ip}:${a.port}${a.path}`, {
        headers: a.headers,
        redirect: "manual",
        signal: AbortSignal.timeout(probe.timeoutMs),
      });
      await res.body?.cancel();
      return res.status >= 200 && res.status < 400;
    }
    if (a.type === "grpc") {
      const client = createRpcClient(healthV1.HealthService, `${ip}:${a.port}`);
      try {
        const res = await client.check({ service: a.service }, { timeoutMs: probe.timeoutMs });
        return res.status === healthV1.HealthCheckResponse_ServingStatus.SERVING;
      } finally {
        client.close();
      }
    }
    if (a.type === "tcp")
      return await new Promise<boolean>((resolve) => {
        const socket = connect({ host: ip, port: a.port, timeout: probe.timeoutMs });
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
        socket.once("timeout", () => {
          socket.destroy();
          resolve(false);
        });
      });
    const r = await podman(["exec", container, ...a.command], { timeoutMs: probe.timeoutMs });
    return r.code === 0;
  })().catch(() => false);
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `probe` every period after its initial delay until it succeeds successThreshold times in
 * a row (true), it fails failureThreshold times in a row when `giveUpOnFailures` (a startup
 * probe: Kubernetes would restart the container), or `deadline` (epoch ms) passes (false).
 */
export async function waitForProbe(
  probe: PlannedProbe,
  ip: string,
  container: string,
  deadline: number,
  giveUpOnFailures = false,
): Promise<boolean> {
  await sleep(Math.min(probe.initialDelayMs, Math.max(0, deadline - Date.now())));
  let successes = 0;
  let failures = 0;
  while (Date.now() < deadline) {
    const started = Date.now();
    if (await probeOnce(probe, ip, container)) {
      failures = 0;
      if (++successes >= probe.successThreshold) return true;
    } else {
      successes = 0;
      if (++failures >= probe.failureThreshold && giveUpOnFailures) return false;
    }
    await sleep(Math.max(0, probe.periodMs - (Date.now() - started)));
  }
  return false;
}

/**
 * Watches a liveness probe in the background until stopped; counts the times it failed
 * failureThreshold times in a row (each would be a restart by the kubelet). Its timers are
 * unref'd, so a watcher never holds the process open.
 */
export function watchLiveness(probe: PlannedProbe, ip: string, container: string) {
  let stopped = false;
  let kills = 0;
  let failures = 0;
  const nap = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
  void (async () => {
    await nap(probe.initialDelayMs);
    while (!stopped) {
      const ok = await probeOnce(probe, ip, container);
      if (stopped) break;
      failures = ok ? 0 : failures + 1;
      if (failures >= probe.failureThreshold) {
        kills++;
        failures = 0;
      }
      await nap(probe.periodMs);
    }
  })();
  return {
    /** Stops watching (a probe in flight is not counted); returns the failure streaks seen. */
    stop(): number {
      stopped = true;
      return kills;
    },
  };
}
