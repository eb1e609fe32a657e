// The documents service as a library: build from config, start, close. main.ts is the thin shell.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
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
import { commitOperations, type NewConflict } from "./commands/commit.js";
import { findConflicts, resolveConflict } from "./commands/conflicts.js";
import {
  archiveDocument,
  describeDocument,
  documentsMeta,
  listDocumentEvents,
  listDocuments,
  unarchiveDocument,
  updateDocument,
} from "./commands/library.js";
import { createDocument, type DocumentView, replaceDocument } from "./commands/load.js";
import { startOutboxRelay } from "./commands/outbox-relay.js";
import { getDocument } from "./commands/read.js";
import { saveDocument } from "./commands/save.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import type { ConflictRow, DocumentRow } from "./db/tables.js";

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
  return rowMeta(view.row, view.versionId);
}

function rowMeta(row: DocumentRow, versionId = row.head_version_id): documentsV1.DocumentMeta {
  return {
    documentId: row.id,
    title: row.title,
    versionId,
    chunkCount: row.chunk_count,
    sectionCount: row.section_count,
    pageSetupJson: row.page_setup ? JSON.stringify(row.page_setup) : "",
    archived: row.archived_at !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function conflictRecord(c: NewConflict | ConflictRow): documentsV1.ConflictRecord {
  return {
    conflictId: c.id,
    documentId: c.document_id,
    chunkId: c.chunk_id,
    kind: c.kind,
    sessionId: c.session_id,
    baseHtml: c.base_html,
    oursHtml: c.ours_html,
    theirsHtml: c.theirs_html,
    baseVersionId: c.base_version_id,
    headVersionId: c.head_version_id,
    createdAt: "created_at" in c ? c.created_at : new Date(),
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
        idempotencyKey: req.idempotencyKey,
        keepParts: req.keepParts,
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
        keepParts: req.keepParts,
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
        recordConflicts: req.recordConflicts ?? false,
        writer: "chat",
        idempotencyKey: req.idempotencyKey,
      });
      if (result.committed) afterCommit();
      return {
        document: rowMeta(result.row),
        changes: result.changes,
        chunks: result.chunks,
        replayed: result.replayed,
        merged: result.merged,
        conflicts: result.conflicts.map(conflictRecord),
        mergedChunkIds: result.mergedChunkIds,
      };
    },
  });
}

/** Handlers of documents.v1.DocumentLibraryService (the Files view, saves, events, conflicts). */
export function libraryHandlers(db: Knex, afterCommit: () => void) {
  return bindService(documentsLibraryV1.DocumentLibraryServiceService, {
    async listDocuments(req, ctx) {
      const { documents, total } = await listDocuments(db, ownerOf(ctx), {
        limit: req.limit,
        offset: req.offset,
        archived: req.archived,
        includePreview: req.includePreview,
      });
      return { documents: documents.map((d) => ({ document: rowMeta(d.row), previewHtml: d.previewHtml })), total };
    },
    async getDocumentsMeta(req, ctx) {
      return { documents: (await documentsMeta(db, ownerOf(ctx), req.documentIds)).map((row) => rowMeta(row)) };
    },
    async describeDocument(req, ctx) {
      const { row, chunks, structure } = await describeDocument(db, ownerOf(ctx), req.documentId);
      return { document: rowMeta(row), structure, chunks };
    },
    async updateDocument(req, ctx) {
      const title = req.title?.trim();
      if (req.title !== undefined && !title) throw new InputError("title must not be empty");
      const row = await updateDocument(db, ownerOf(ctx), {
        documentId: req.documentId,
        title: title?.slice(0, 500),
        pageSetup: req.pageSetupJson === undefined ? undefined : (parsePageSetup(req.pageSetupJson) ?? null),
        sessionId: req.sessionId,
      });
      afterCommit();
      return { document: rowMeta(row) };
    },
    async archiveDocument(req, ctx) {
      const { row, alreadyArchived } = await archiveDocument(db, ownerOf(ctx), req);
      if (!alreadyArchived) afterCommit();
      return { document: rowMeta(row), alreadyArchived };
    },
    async unarchiveDocument(req, ctx) {
      const { row, unarchived } = await unarchiveDocument(db, ownerOf(ctx), req);
      if (unarchived) afterCommit();
      return { found: row !== undefined, unarchived, document: row ? rowMeta(row) : undefined };
    },
    async saveDocument(req, ctx) {
      const result = await saveDocument(db, ownerOf(ctx), req);
      if (result.changedChunkIds.length > 0) afterCommit();
      return {
        document: rowMeta(result.row),
        changedChunkIds: result.changedChunkIds,
        merged: result.merged,
        chunks: result.chunks,
      };
    },
    async listDocumentEvents(req, ctx) {
      const { events, hasMore } = await listDocumentEvents(db, ownerOf(ctx), {
        documentIds: req.documentIds,
        afterId: req.afterId,
        excludeSessionId: req.excludeSessionId,
        limit: req.limit,
        types: req.types,
      });
      return {
        events: events.map((e) => ({
          id: Number(e.id),
          type: e.event_type,
          documentId: e.document_id,
          versionId: e.version_id,
          sessionId: e.session_id,
          createdAt: e.created_at,
          payloadJson: JSON.stringify(e.payload ?? {}),
        })),
        hasMore,
      };
    },
    async findConflicts(req, ctx) {
      const { conflicts, documentId } = await findConflicts(db, ownerOf(ctx), req.documentIds, req.chunkId);
      return { conflicts: conflicts.map(conflictRecord), documentId };
    },
    async resolveConflict(req, ctx) {
      const { row, html } = await resolveConflict(db, ownerOf(ctx), req);
      afterCommit();
      return { document: rowMeta(row), html };
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
      libraryHandlers(db, () => relay.kick()),
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
