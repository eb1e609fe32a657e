// The standard gRPC health service, answering SERVING only when every dependency responds and the
// service is not shutting down.
import { healthV1 } from "@redline/grpc-stubs";
import { bindService, type ServiceBinding } from "./rpc.js";

/** A dependency probe: resolves when the dependency answers, rejects otherwise. */
export type HealthCheck = () => Promise<unknown>;

const CHECK_TIMEOUT_MS = 2000;

/** Runs every probe with a timeout; returns the names that failed (empty when healthy). */
export async function runHealthChecks(checks: Record<string, HealthCheck>): Promise<string[]> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS);
          }),
        ]);
        return null;
      } catch {
        return name;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return results.filter((n): n is string => n !== null);
}

/**
 * `fn` shared and remembered: concurrent callers share one run (single flight), and its result
 * (or rejection) is reused for `ttlMs` after it settles, so probes and load balancers polling
 * at any rate cost at most one check per `ttlMs`.
 */
export function singleFlight<T>(fn: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let current: Promise<T> | undefined;
  let settledAt = 0;
  return () => {
    if (current && (settledAt === 0 || Date.now() - settledAt < ttlMs)) return current;
    settledAt = 0;
    const run = fn();
    current = run;
    const settle = () => {
      if (current === run) settledAt = Date.now();
    };
    run.then(settle, settle);
    return run;
  };
}

/** How long a backend reuses its dependency checks' outcome. */
export const HEALTH_CACHE_MS = 1000;

/**
 * grpc.health.v1.Health bound to the given probes. Once `stopping()` is true (shutdown began)
 * Check answers NOT_SERVING without probing, so probes and balancers stop routing to this
 * instance while it still finishes what it has. The dependency probes run at most once per
 * HEALTH_CACHE_MS whatever the rate of Check calls.
 */
export function healthService(
  checks: Record<string, HealthCheck>,
  stopping: () => boolean = () => false,
): ServiceBinding {
  const ServingStatus = healthV1.HealthCheckResponse_ServingStatus;
  const failing = singleFlight(() => runHealthChecks(checks), HEALTH_CACHE_MS);
  return bindService(healthV1.HealthService, {
    async check() {
      if (stopping()) return { status: ServingStatus.NOT_SERVING };
      const failed = await failing();
      return { status: failed.length === 0 ? ServingStatus.SERVING : ServingStatus.NOT_SERVING };
    },
  });
}
