// The ingest service as a library: build from config, start, close. main.ts is the thin shell.
import { ingestV1 } from "@redline/grpc-stubs";
import { bindService, createLogger, healthService, type ServiceBinding, startGrpcServer } from "@redline/service-kit";
import { type ConvertLimits, DEFAULT_LIMITS } from "./formats.js";
import { convertDocumentHandler } from "./routes/convert-document.js";
import { listFormats } from "./routes/list-formats.js";
import { ConverterPool } from "./sandbox/pool.js";

/** Ingest configuration. Sizes in bytes, durations in milliseconds. */
export interface IngestConfig {
  /** host:port to serve on; port 0 picks a free one. */
  grpcAddress: string;
  /** Upload cap in bytes; larger content gets 413 request_too_large. */
  maxUploadBytes: number;
  /** pino level (default info). */
  logLevel?: string;
  /** Contact address put in 413 bodies (default support@redline.local). */
  supportEmail?: string;
  /** Converter worker threads (default: CPU count, at most 4). */
  converterWorkers?: number;
  /** Heap cap of each converter worker in MB (default 2048). */
  converterMemoryMb?: number;
  /** Overrides of DEFAULT_LIMITS (conversion timeout, zip bomb bounds). */
  limits?: Partial<ConvertLimits>;
}

/** A started service. */
export interface RunningIngestService {
  /** host:port actually bound. */
  address: string;
  close(): Promise<void>;
}

/** Handlers of ingest.v1.IngestService over a converter pool. */
export function ingestHandlers(cfg: IngestConfig, pool: ConverterPool): ServiceBinding {
  return bindService(ingestV1.IngestServiceService, {
    convertDocument: convertDocumentHandler({
      pool,
      maxUploadBytes: cfg.maxUploadBytes,
      supportEmail: cfg.supportEmail ?? "support@redline.local",
      limits: { ...DEFAULT_LIMITS, ...cfg.limits },
    }),
    listFormats,
  });
}

/**
 * Serves IngestService and grpc.health.v1.Health on cfg.grpcAddress (interface-spec fact 8).
 * Ingest has no dependencies, so health answers SERVING while the server runs. Conversions
 * run in a pool of worker threads started here and terminated by close().
 */
export async function startIngestService(cfg: IngestConfig): Promise<RunningIngestService> {
  const log = createLogger("ingest", cfg.logLevel);
  const pool = new ConverterPool({ size: cfg.converterWorkers, maxMemoryMb: cfg.converterMemoryMb });
  pool.warm();
  let server: Awaited<ReturnType<typeof startGrpcServer>>;
  try {
    server = await startGrpcServer(cfg.grpcAddress, [ingestHandlers(cfg, pool), healthService({})], log);
  } catch (err) {
    await pool.close();
    throw err;
  }
  log.info({ address: server.address }, "ingest service listening");
  return {
    address: server.address,
    async close() {
      await server.close();
      await pool.close();
    },
  };
}
