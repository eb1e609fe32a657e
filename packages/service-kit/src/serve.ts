// The common tail of every service's start<Name>Service: serve the bound RPCs plus the standard
// health service, log the address, and close in order (stop serving, then release dependencies).
import { type HealthCheck, healthService } from "./health.js";
import type { Logger } from "./logger.js";
import { type ServiceBinding, startGrpcServer } from "./rpc.js";

/** A started service: its bound gRPC address (host:port) and an idempotent close. */
export interface RunningService {
  address: string;
  close(): Promise<void>;
}

/** What serveService needs: the services to bind, the dependency probes, and how to release. */
export interface ServeOptions {
  /** The service's name, for the log line. */
  name: string;
  /** host:port; port 0 picks a free port. */
  address: string;
  services: ServiceBinding[];
  /** Probes for grpc.health.v1 (e.g. `{postgres: () => pingDb(db)}`). */
  health: Record<string, HealthCheck>;
  log: Logger;
  /** Releases the context (pools, connections, loops); runs after the server stopped. */
  release(): Promise<void>;
}

/**
 * Serves `services` and grpc.health.v1 on `address`. close() stops accepting, lets in-flight
 * calls finish (5 s, then forced), then calls `release`; a second close() waits for the first.
 */
export async function serveService(opts: ServeOptions): Promise<RunningService> {
  const server = await startGrpcServer(opts.address, [...opts.services, healthService(opts.health)], opts.log);
  opts.log.info({ address: server.address }, `${opts.name} listening`);
  let closing: Promise<void> | undefined;
  return {
    address: server.address,
    close() {
      closing ??= server.close().then(() => opts.release());
      return closing;
    },
  };
}
