// Row types of the documents schema (snake_case, as stored).

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
}

export interface VersionRow {
  id: string;
  document_id: string;
  seq: number;
  parent_id: string | null;
  session_id: string;
  kind: "create" | "replace" | "edit";
  summary: string;
  created_at: Date;
}

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
  event_type: string;
  owner_id: string;
  document_id: string;
  version_id: string;
  session_id: string;
  payload: Record<string, unknown>;
  created_at: Date;
  published_at: Date | null;
}
