// Row types and table names of the documents schema (snake_case, as stored).
import type { DocumentEventType } from "@redline/event-contracts";
import type { Knex } from "@redline/service-kit";
import { SCHEMA } from "./migrations.js";

/** Qualified table names. */
export const TABLES = {
  documents: `${SCHEMA}.documents`,
  versions: `${SCHEMA}.versions`,
  chunks: `${SCHEMA}.chunk_revisions`,
  outbox: `${SCHEMA}.outbox`,
  conflicts: `${SCHEMA}.conflicts`,
};

/** A pool or a transaction: stores run inside the command's transaction when there is one. */
export type Db = Knex | Knex.Transaction;

export interface DocumentRow {
  id: string;
  owner_id: string;
  title: string;
  page_setup: Record<string, unknown> | null;
  head_version_id: string;
  head_seq: number;
  chunk_count: number;
  /** Heading-anchored sections: the number of heading chunks. */
  section_count: number;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The original file it was loaded from (ingest's source id); null when created in Redline. */
  source_id: string | null;
  /** That original's format: docx, markdown or txt. */
  source_format: string | null;
  /** The version (seq) the original was loaded as. */
  source_seq: number | null;
}

export interface VersionRow {
  id: string;
  document_id: string;
  seq: number;
  parent_id: string | null;
  session_id: string;
  /** restore: a version restored from an older one (its summary names which). */
  kind: "create" | "replace" | "edit" | "restore";
  summary: string;
  /** Set by commits that asked for idempotency (unique per document). */
  idempotency_key?: string | null;
  /** Who made it, as people read it ("Redline AI", the user's name; "Redline" when unknown). */
  author: string;
  /** "ai", "user", or "unknown" (written before authors were recorded). */
  author_kind: VersionAuthorKind;
  /** The commit kind that wrote it ("save" or "chat"); null for loads, replaces and older versions. */
  writer?: VersionWriter | null;
  created_at: Date;
}

/** Which kind of commit wrote a version: a human save or a chat turn's edit. */
export type VersionWriter = "save" | "chat";

/** Who made a version. */
export type VersionAuthorKind = "ai" | "user" | "unknown";

/** A version's author: its kind and the name written on it. */
export interface VersionAuthor {
  kind: VersionAuthorKind;
  name: string;
}

/** The author of versions whose writer did not say (and of those before authors were kept). */
export const UNATTRIBUTED: VersionAuthor = { kind: "unknown", name: "Redline" };

/** The AI's name on its versions and tracked changes. */
export const AI_AUTHOR: VersionAuthor = { kind: "ai", name: "Redline AI" };

/** One revision of one chunk, live for versions valid_from <= seq < valid_to (null: still live). */
export interface ChunkRevisionRow {
  document_id: string;
  chunk_id: string;
  position: string;
  html: string;
  valid_from: number;
  valid_to: number | null;
}

export interface OutboxRow {
  id: string;
  event_type: DocumentEventType;
  owner_id: string;
  document_id: string;
  version_id: string;
  session_id: string;
  payload: Record<string, unknown>;
  /** W3C traceparent of the write that appended the event; null when tracing was off. */
  traceparent: string | null;
  created_at: Date;
  published_at: Date | null;
}

/** A write to one chunk that lost to another session's commit, kept until resolved (re-edit). */
export interface ConflictRow {
  id: string;
  owner_id: string;
  document_id: string;
  chunk_id: string;
  /** "save" (a human save) or "chat" (an AI edit). */
  kind: string;
  session_id: string;
  /** The chunk at the writer's base ("" when it did not exist). */
  base_html: string;
  /** The writer's version ("" for a delete). */
  ours_html: string;
  /** The chunk at head when it happened ("" when deleted). */
  theirs_html: string;
  base_version_id: string;
  head_version_id: string;
  created_at: Date;
  resolved_at: Date | null;
  resolved_version_id: string | null;
}
