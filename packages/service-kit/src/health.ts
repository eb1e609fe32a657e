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
 * grpc.health.v1.Health bound to the given probes. Once `stopping()` is true (shutdown began)
 * Check answers NOT_SERVING without probing, so probes and balancers stop routing to this
 * instance while it still finishes what it has.
 */
export function healthService(
  checks: Record<string, HealthCheck>,
  stopping: () => boolean = () => false,
): ServiceBinding {
  const ServingStatus = healthV1.HealthCheckResponse_ServingStatus;
  return bindService(healthV1.HealthService, {
    async check() {
      if (stopping()) return { status: ServingStatus.NOT_SERVING };
      const failed = await runHealthChecks(checks);
      return { status: failed.length === 0 ? ServingStatus.SERVING : ServingStatus.NOT_SERVING };
    },
  });
}
