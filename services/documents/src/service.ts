// The documents service as a library: build from config, start, close. main.ts is the thin shell.
import { documentsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import {
  bindService,
  type CallContext,
  connectNats,
  createDb,
  createLogger,
  healthService,
  InputError,
  type Knex,
  migrateLatest,
  pingDb,
  pingNats,
  requirePrincipal,
  startGrpcServer,
} from "@redline/service-kit";
import { commitOperations } from "./commands/commit.js";
import { createDocument, type DocumentView, replaceDocument } from "./commands/load.js";
import { getDocument } from "./commands/read.js";
import { migrations, SCHEMA } from "./migrations.js";
import { startOutboxRelay } from "./outbox-relay.js";

/** Documents configuration. */
export interface DocumentsConfig {
  grpcAddress: string;
  databaseUrl: string;
  natsUrl: string;
  logLevel?: string;
}

/** A started service; `db` is exposed for benchmarks and tests that compare against Postgres. */
export interface RunningDocumentsService {
  address: string;
  db: Knex;
  close(): Promise<void>;
}

function ownerOf(ctx: CallContext): string {
  return requirePrincipal(ctx).ownerId;
}

function parsePageSetup(json: string): Record<string, unknown> | null | undefined {
  if (!json) return undefined;
  try {
    const value = JSON.parse(json);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error();
    return value as Record<string, unknown>;
  } catch {
    throw new InputError("page_setup must be a JSON object");
  }
}

function meta(view: Pick<DocumentView, "row" | "versionId">): documentsV1.DocumentMeta {
  const { row } = view;
  return {
    documentId: row.id,
    title: row.title,
    versionId: view.versionId,
    chunkCount: row.chunk_count,
    sectionCount: row.section_count,
    pageSetupJson: row.page_setup ? JSON.stringify(row.page_setup) : "",
    archived: row.archived_at !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const OP_KINDS: Record<number, ChunkOperation["kind"] | undefined> = {
  [documentsV1.OperationKind.OPERATION_KIND_REPLACE]: "replace",
  [documentsV1.OperationKind.OPERATION_KIND_INSERT]: "insert",
  [documentsV1.OperationKind.OPERATION_KIND_DELETE]: "delete",
};

function toOperation(op: documentsV1.ChunkOperation, index: number): ChunkOperation {
  const kind = OP_KINDS[op.kind];
  if (!kind) throw new InputError(`operation ${index}: kind is required`);
  if (!op.chunkId) throw new InputError(`operation ${index}: chunk_id is required`);
  if (kind === "insert")
    return {
      kind,
      chunkId: op.chunkId,
      html: op.html,
      afterChunkId: op.afterChunkId || null,
      explanation: op.explanation,
    };
  if (kind === "replace") return { kind, chunkId: op.chunkId, html: op.html, explanation: op.explanation };
  return { kind, chunkId: op.chunkId, explanation: op.explanation };
}

/** Handlers of documents.v1.DocumentsService. */
export function documentsHandlers(db: Knex, afterCommit: () => void) {
  return bindService(documentsV1.DocumentsServiceService, {
    async createDocument(req, ctx) {
      const view = await createDocument(db, ownerOf(ctx), {
        html: req.html,
        title: req.title,
        pageSetup: parsePageSetup(req.pageSetupJson) ?? null,
        sessionId: req.sessionId,
      });
      afterCommit();
      return { document: meta(view), chunks: view.chunks };
    },
    async replaceDocument(req, ctx) {
      const view = await replaceDocument(db, ownerOf(ctx), {
        documentId: req.documentId,
        html: req.html,
        sessionId: req.sessionId,
        title: req.title,
        pageSetup: parsePageSetup(req.pageSetupJson),
      });
      afterCommit();
      return { document: meta(view), chunks: view.chunks };
    },
    async getDocument(req, ctx) {
      const view = await getDocument(db, ownerOf(ctx), {
        documentId: req.documentId,
        versionId: req.versionId,
        includeChunks: req.includeChunks,
      });
      return { document: meta(view), chunks: view.chunks };
    },
    async commitOperations(req, ctx) {
      const result = await commitOperations(db, ownerOf(ctx), {
        documentId: req.documentId,
        baseVersionId: req.baseVersionId,
        sessionId: req.sessionId,
        operations: req.operations.map(toOperation),
        summary: req.summary,
        returnChunks: req.returnChunks,
      });
      afterCommit();
      return {
        document: meta({ row: result.row, versionId: result.row.head_version_id }),
        changes: result.changes,
        chunks: result.chunks,
        merged: result.merged,
      };
    },
  });
}

/** Migrates the documents schema, starts the outbox relay, serves DocumentsService and Health. */
export async function startDocumentsService(cfg: DocumentsConfig): Promise<RunningDocumentsService> {
  const log = createLogger("documents", cfg.logLevel);
  const db = createDb(cfg.databaseUrl, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  const nc = await connectNats(cfg.natsUrl, "documents");
  const relay = await startOutboxRelay(db, nc, log.child({ component: "outbox-relay" }));
  const server = await startGrpcServer(
    cfg.grpcAddress,
    [
      documentsHandlers(db, () => relay.kick()),
      healthService({ postgres: () => pingDb(db), nats: () => pingNats(nc) }),
    ],
    log,
  );
  log.info({ address: server.address }, "documents listening");
  return {
    address: server.address,
    db,
    async close() {
      await server.close();
      await relay.stop();
      await nc.drain();
      await db.destroy();
    },
  };
}
