// A chat turn's writes to one document in one transaction: the content it loaded (the agent's
// chunks, checked here) and its net operations, each its own version (ARCHITECTURE "One chat turn").
import type { ChunkOperation, ChunkRecord } from "@redline/html-chunks";
import { InputError, type Knex } from "@redline/service-kit";
import { insertConflicts } from "../db/store/conflicts.js";
import { findDocument } from "../db/store/documents.js";
import { chunkRecordsAt } from "../db/store/revisions.js";
import { AI_AUTHOR, type DocumentRow, type VersionAuthor } from "../db/tables.js";
import { type CommitResult, commitInTransaction } from "./commit.js";
import { insertLoaded, type NewDocumentInput, replaceInTransaction, validateLoadChunks } from "./load.js";

/** Content a turn stores before its edits: the agent's chunks and what the new version records. */
export interface TurnLoadInput {
  chunks: ChunkRecord[];
  title?: string;
  pageSetup?: Record<string, unknown> | null;
  /** The chunks may carry out-of-flow part marks (docx/rtf/pdf converter output). */
  keepParts?: boolean;
  source?: NewDocumentInput["source"];
  /** Makes the load idempotent (a new document's id; a stored document's version key). */
  idempotencyKey?: string;
}

/** What a turn writes; see commitTurn. */
export interface TurnInput {
  /** Empty: the load creates a new document. */
  documentId: string;
  sessionId: string;
  load?: TurnLoadInput;
  /** Without a load: the version the operations were computed on. */
  baseVersionId: string;
  operations: ChunkOperation[];
  summary: string;
  /** The edits' commit key: a second call with it writes no edits (`replayed`). */
  idempotencyKey?: string;
  /** Read head's chunks when the edits were merged around another session's commit. */
  returnChunksWhenMerged?: boolean;
  /** Who the load is attributed to (the calling user); the edits are always the AI's. */
  author: VersionAuthor;
  /** The writing RPC's span (traceparentOf(call.trace)), for the events' publish. */
  traceparent?: string | null;
}

/** What a turn wrote. */
export interface TurnResult {
  /** The document at head after the turn's writes. */
  row: DocumentRow;
  /** Head before the turn wrote anything (its checkpoint); "" for a document it created. */
  previousVersionId: string;
  /** The version the load wrote (or answered, replayed); "" without a load. */
  loadedVersionId: string;
  loadReplayed: boolean;
  /** The edits' commit; undefined when the turn had no operations. */
  commit?: CommitResult;
  /** True when a version or document was written (the relay has an event to publish). */
  wrote: boolean;
}

/** The load as stored: the document row at the loaded version, the head before, and whether it was replayed. */
interface Loaded {
  row: DocumentRow;
  versionId: string;
  previousVersionId: string;
  replayed: boolean;
}

/**
 * Stores a turn in one transaction: the load (validateLoadChunks; a new document, or a replace
 * of `documentId`), then the operations on it (or on `baseVersionId`) as one version by the AI,
 * merged three-way onto head with clashing operations recorded as conflicts (commitInTransaction,
 * `recordConflicts`). Nothing is written when any part fails; the agent then stores the load
 * alone (the same call without operations) so the user's content is kept. InputError (400
 * `invalid_chunk`, `invalid_operation`, a turn with neither load nor document); NotFoundError;
 * ConflictError `document_archived`.
 */
export async function commitTurn(db: Knex, ownerId: string, input: TurnInput): Promise<TurnResult> {
  if (!input.load && !input.documentId) throw new InputError("document_id or load is required");
  if (!input.load && input.operations.length === 0) throw new InputError("no operations to commit");
  // Checked before the transaction: the CPU work holds no lock.
  const chunks = input.load ? validateLoadChunks(input.load.chunks, input.load.keepParts) : [];
  return db.transaction(async (trx) => {
    const loaded = input.load ? await storeLoad(trx, ownerId, input, input.load, chunks) : undefined;
    const documentId = loaded?.row.id ?? input.documentId;
    const loadFields = {
      loadedVersionId: loaded?.versionId ?? "",
      loadReplayed: loaded?.replayed ?? false,
      wrote: loaded ? !loaded.replayed : false,
    };
    if (input.operations.length === 0 && loaded) {
      return { row: loaded.row, previousVersionId: loaded.previousVersionId, ...loadFields };
    }
    const commit = await commitInTransaction(trx, ownerId, {
      documentId,
      baseVersionId: loaded?.versionId ?? input.baseVersionId,
      sessionId: input.sessionId,
      operations: input.operations,
      summary: input.summary,
      returnChunks: false,
      recordConflicts: true,
      writer: "chat",
      idempotencyKey: input.idempotencyKey,
      author: AI_AUTHOR,
      traceparent: input.traceparent,
    });
    if (commit.conflicts.length > 0) await insertConflicts(trx, commit.conflicts);
    if (commit.merged && input.returnChunksWhenMerged) commit.chunks = await chunkRecordsAt(trx, documentId);
    const previousVersionId = loaded?.previousVersionId ?? commit.previousVersionId;
    return { row: commit.row, previousVersionId, commit, ...loadFields, wrote: loadFields.wrote || commit.committed };
  });
}

/** Creates the document from the load, or replaces the stored one's content. */
async function storeLoad(
  trx: Knex.Transaction,
  ownerId: string,
  input: TurnInput,
  load: TurnLoadInput,
  chunks: ChunkRecord[],
): Promise<Loaded> {
  const fields = {
    sessionId: input.sessionId,
    title: load.title,
    pageSetup: load.pageSetup,
    author: input.author,
    source: load.source,
    idempotencyKey: load.idempotencyKey,
    traceparent: input.traceparent,
  };
  if (input.documentId) {
    const replaced = await replaceInTransaction(trx, ownerId, { ...fields, documentId: input.documentId }, chunks);
    const { row, versionId, previousVersionId, replayed } = replaced;
    return { row, versionId, previousVersionId, replayed };
  }
  const created = await insertLoaded(trx, ownerId, fields, chunks);
  if (created.row) {
    return { row: created.row, versionId: created.row.head_version_id, previousVersionId: "", replayed: false };
  }
  // A replay: the document the key created, as it is now (its id embeds the owner).
  const row = await findDocument(trx, ownerId, created.id, true);
  if (!row) throw new Error(`document ${created.id} vanished during its replay`);
  return { row, versionId: row.head_version_id, previousVersionId: "", replayed: true };
}
