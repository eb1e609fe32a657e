// A session's roster of open documents (interface-spec endpoints 9-14 and 16-18): init, open, blank, save,
// unarchive in a session, focus, close, re-edit a conflicted chunk and editor actions.
import { z } from "zod";
import {
  boundedRecord,
  component,
  documentRef,
  MAX_DOCUMENT_CHARS,
  MAX_ID_CHARS,
  queryFlag,
  sessionId,
  UsageSchema,
} from "../shared/schemas.js";

/** Path of /v1/sessions/{session_id}/documents/{document_id}. */
export const SessionDocumentPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
  document_id: documentRef,
});

/** Path of the re-edit route. */
export const ChunkPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
  chunk_id: z.string().min(1).max(128).meta({ description: "The chunk to resolve." }),
});

/** GET .../documents query (endpoint 14). */
export const RosterQuerySchema = z.object({
  include_html: queryFlag(false, "Adds each document's HTML."),
  report_changed: queryFlag(false, "Adds changed_since_seen to each entry."),
});

/** DELETE .../documents/{id} query (endpoint 17). */
export const CloseQuerySchema = z.object({
  next_focus: z.string().max(256).optional().meta({ description: "Slot or durable id to focus next." }),
  include_html: queryFlag(false, "Adds each document's HTML."),
});

/** POST .../documents/open (OpenDocumentsRequest). */
export const OpenDocumentsSchema = component("OpenDocumentsRequest", {
  document_ids: z.array(documentRef).min(1).max(50).meta({ description: "Saved documents; the first is focused." }),
});

/** POST /v1/sessions/init (InitSessionRequest). */
export const InitSessionSchema = component("InitSessionRequest", {
  session_id: sessionId.nullish().meta({ description: "Minted by the server when omitted." }),
  document_ids: z
    .array(documentRef)
    .max(50)
    .nullish()
    .meta({ description: "Documents to open; none gives an empty session." }),
});

/** One editor action (font, colour, alignment change). */
export const EditorActionInputSchema = component("EditorActionInput", {
  action: z.string().min(1).max(64).meta({ description: "font, color, alignment (others stored as sent)." }),
  value: z
    .string()
    .max(1000)
    .default("")
    .meta({ description: "Font family or size, colour, left/center/right/justify." }),
  document_id: z.string().max(MAX_ID_CHARS).nullish().meta({ description: "Slot or durable id of the document." }),
  chunk_ids: z.array(z.string().max(128)).max(1000).default([]).meta({ description: "Chunks the action applied to." }),
  details: boundedRecord("Extra attributes.").nullish(),
});

/** POST .../save and the optional body of 12 (SaveDocumentRequest). */
export const SaveDocumentSchema = component("SaveDocumentRequest", {
  html: z.string().max(MAX_DOCUMENT_CHARS).meta({ description: "The edited HTML (chunk ids kept)." }),
  base_version_id: z
    .string()
    .max(64)
    .nullish()
    .meta({ description: "The version the edit started from; default the session's last-seen version." }),
  editor_actions: z
    .array(EditorActionInputSchema)
    .max(500)
    .nullish()
    .meta({ description: "Editor actions to record with the save." }),
});

/** POST .../editor-actions. */
export const RecordEditorActionsSchema = component("RecordEditorActionsRequest", {
  actions: z.array(EditorActionInputSchema).min(1).max(500),
});

/** POST .../chunks/{chunk_id}/re-edit (ReEditChunkRequest). */
export const ReEditChunkSchema = component("ReEditChunkRequest", {
  mode: z
    .enum(["redo", "merge"])
    .meta({ description: "redo re-applies the AI's change on the user's text; merge blends both." }),
  document_id: documentRef.nullish(),
  instruction: z.string().max(10_000).nullish().meta({ description: "Extra guidance for the model." }),
});

/** A roster entry. */
export const RosterEntrySchema = component("SessionRosterEntry", {
  document_id: z.string().meta({ description: "Session-local slot id." }),
  durable_document_id: z.string().nullable().meta({ description: "Permanent UUID; null until first save." }),
  title: z.string(),
  chunk_count: z.number().int(),
  section_count: z.number().int(),
  focused: z.boolean(),
  page_setup: z.record(z.string(), z.unknown()).nullable(),
  version_id: z.string().optional(),
  archived: z.boolean(),
  html: z.string().optional(),
  changed_since_seen: z.boolean().optional(),
});

/** Roster responses (endpoints 9, 10, 13, 14, 16, 17, 12). */
export const RosterResponseSchema = component("RosterResponse", {
  session_id: z.string(),
  created: z.boolean().optional(),
  documents: z.array(RosterEntrySchema).meta({ description: "Focused first." }),
  focused_document_id: z.string().optional().meta({ description: "Left out when the roster is empty." }),
  document: RosterEntrySchema.optional().meta({ description: "The document the call was about." }),
  html: z.string().optional().meta({ description: "HTML of the focused document (focus, close); left out when none." }),
  closed_document_id: z.string().optional(),
  unarchived: z.boolean().optional(),
});

/** Save 200. */
export const SaveResponseSchema = component("SaveDocumentResponse", {
  session_id: z.string(),
  document_id: z.string(),
  durable_document_id: z.string(),
  version_id: z.string(),
  changed_chunk_ids: z.array(z.string()),
  merged: z.boolean().meta({ description: "True when other sessions' commits were merged in." }),
  html: z.string().meta({ description: "The document at the new head." }),
  created: z.boolean().meta({ description: "True when this save created the document (a blank tab's first save)." }),
});

/** 409 chunk_conflict. */
export const ChunkConflictSchema = component("ChunkConflictError", {
  detail: z.string(),
  code: z.literal("chunk_conflict"),
  chunk_ids: z.array(z.string()),
  head_version_id: z.string(),
  conflicts: z.array(z.object({ conflict_id: z.string(), chunk_id: z.string() })),
  conflict_count: z.number().int().meta({ description: "All conflicts recorded; at most 200 are listed." }),
  truncated: z.boolean().meta({ description: "True when chunk_ids or conflicts list only the first 200." }),
  suggested_action: z.string(),
});

/** Re-edit 200. */
export const ReEditChunkResponseSchema = component("ReEditChunkResponse", {
  chunk_id: z.string(),
  html: z.string().meta({ description: "The rewritten section HTML." }),
  version_id: z.string(),
  usage: UsageSchema,
});

/** An editor action as stored. */
export const EditorActionSchema = component("EditorAction", {
  id: z.string(),
  action: z.string(),
  value: z.string(),
  document_id: z.string().optional(),
  chunk_ids: z.array(z.string()),
  details: z.record(z.string(), z.unknown()).nullable(),
  timestamp: z.string().optional(),
});

/** POST editor-actions 200. */
export const EditorActionsResponseSchema = component("EditorActionsResponse", {
  session_id: z.string(),
  actions: z.array(EditorActionSchema),
});

/** The optional body of the session unarchive (endpoint 12): a SaveDocumentRequest, or nothing. */
export const UnarchiveBodySchema = SaveDocumentSchema.partial().optional().meta({
  description: "Optional SaveDocumentRequest: with html, the edits are saved on top of the restored document.",
});
