// The ingest service as a library: start from a config, close. main.ts is the thin shell.
import { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import {
  type HealthCheck,
  type Periodic,
  pingDb,
  type RunningService,
  type StartOptions,
  serveService,
} from "@redline/service-kit";
import { DEFAULT_FILE_SWEEP_MS, startFileSweep } from "./commands/retention.js";
import type { IngestConfig } from "./config.js";
import { closeContext, createContext, type IngestContext } from "./context.js";

/** A started ingest service (kept as a name for tests and scripts). */
export type RunningIngestService = RunningService;

// Without storage there is nothing to probe: conversions and exports need only the process.
// With it, the stored-file RPCs need both Postgres and the object store.
function healthChecks(ctx: IngestContext): Record<string, HealthCheck> {
  const storage = ctx.storage;
  return storage ? { postgres: () => pingDb(storage.db), s3: () => storage.store.ping() } : {};
}

/**
 * Serves IngestService, FilesService and grpc.health.v1.Health on cfg.grpcAddress (interface-spec
 * fact 8; unshown-parts.md uploads, attachments, templates, export). With databaseUrl and s3 it
 * migrates the `ingest` schema (unless `opts.migrate` is false) and ensures the bucket first;
 * attachments left pending by an earlier process are resumed, and the expired-file sweep runs
 * every `cfg.fileSweepMs` (commands/retention.ts; originals too with `cfg.addrs`, which names
 * documents). Conversions run in a pool of worker processes;
 * PDF export uses one warm Chromium launched on first use. close() stops all of it.
 */
export async function startIngestService(cfg: IngestConfig, opts: StartOptions = {}): Promise<RunningService> {
  const ctx = await createContext(cfg, opts);
  let running: RunningService;
  let sweep: Periodic | null = null;
  try {
    const rpc = {
      dir: new URL("./rpc/", import.meta.url),
      definitions: [ingestV1.IngestServiceService, ingestFilesV1.FilesServiceService],
    };
    const release = async () => {
      await sweep?.stop();
      await closeContext(ctx);
    };
    running = await serveService("ingest", cfg.grpcAddress, ctx, {
      rpc,
      health: healthChecks(ctx),
      metrics: cfg.metricsAddr,
      release,
    });
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  await ctx.attachments.resume();
  // Started once serving, so a failed start leaves no timer behind.
  sweep = ctx.storage && startFileSweep(ctx, ctx.storage, cfg.fileSweepMs ?? DEFAULT_FILE_SWEEP_MS);
  return running;
}
