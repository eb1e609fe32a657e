// The common tail of every service's start<Name>Service: bind the RPC files, serve them plus the
// standard health service, log the address, and close in order (stop serving, then release).
import { type HealthCheck, healthService } from "./health.js";
import type { Logger } from "./logger.js";
import { bindRpcFiles, type ServiceDef, startGrpcServer } from "./rpc.js";

/** A started service: its bound gRPC address (host:port) and an idempotent close. */
export interface RunningService {
  address: string;
  close(): Promise<void>;
}

/** What serveService needs besides the name, address and context. */
export interface ServeOptions {
  /** The folder of the service's RPC files (`new URL("./rpc/", import.meta.url)`) and the proto services they serve. */
  rpc: { dir: URL; definitions: ServiceDef[] };
  /** Probes for grpc.health.v1 (e.g. `{postgres: () => pingDb(db)}`). */
  health: Record<string, HealthCheck>;
  /** Releases the context (pools, connections, loops); runs after the server stopped. */
  release(): Promise<void>;
}

/**
 * Serves every RPC of `opts.rpc.definitions` from its file (bindRpcFiles, handed `ctx`) and
 * grpc.health.v1 on `address` (host:port; port 0 picks one). close() stops accepting, lets
 * in-flight calls finish (5 s, then forced), then calls `release`; a second close() waits for the
 * first. Throws, naming the file, when an RPC has no file.
 */
export async function serveService<Ctx extends { log: Logger }>(
  name: string,
  address: string,
  ctx: Ctx,
  opts: ServeOptions,
): Promise<RunningService> {
  const services = await bindRpcFiles(ctx, opts.rpc.dir, opts.rpc.definitions);
  const server = await startGrpcServer(address, [...services, healthService(opts.health)], ctx.log);
  ctx.log.info({ address: server.address }, `${name} listening`);
  let closing: Promise<void> | undefined;
  return {
    address: server.address,
    close() {
      closing ??= server.close().then(() => opts.release());
      return closing;
    },
  };
}
