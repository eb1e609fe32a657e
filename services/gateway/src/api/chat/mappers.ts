// Chat JSON ↔ agent proto: the chat request to the Chat RPC, its response (document changes,
// usage) and the revert answer to JSON.
import type { agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import type { z } from "zod";
import { changeRecordToJson, usageToJson } from "../shared/mappers.js";
import { normalizeBase64 } from "../shared/schemas.js";
import { declaredImageType } from "./images.js";
import type { ChatRequestBody, ChatResponseJson, DocumentChangesJson, RevertResponseSchema } from "./schemas.js";

/**
 * The agent's ChatRequest from a validated /v1/chat body: null and absent become proto defaults,
 * the upload's base64 is decoded to bytes (`upload.content`), image data loses any data: prefix
 * and its type is named canonically (`image/jpg` → `image/jpeg`).
 */
export function toChatRpcRequest(body: ChatRequestBody): agentV1.ChatRequest {
  const upload = body.upload_document_base64;
  const cursor = body.cursor_context;
  return {
    message: body.message,
    sessionId: body.session_id ?? "",
    documentHtml: body.document_html ?? undefined,
    upload: upload
      ? { filename: upload.filename, content: Buffer.from(normalizeBase64(upload.file_base64), "base64") }
      : undefined,
    documentId: body.document_id ?? "",
    modelTier: body.model_tier,
    thinkingDepth: body.thinking_depth,
    approvalMode: body.approval_mode,
    responseMode: body.response_mode,
    cursorContext: cursor ? { chunkId: cursor.chunk_id ?? "", selectedText: cursor.selected_text ?? "" } : undefined,
    crossSessionMemoryKey: body.cross_session_memory_key ?? "",
    imageAttachments: (body.image_attachments ?? []).map((img) => {
      const data = normalizeBase64(img.base64Data, true);
      return {
        id: img.id ?? "",
        name: img.name,
        base64Data: data,
        // Validated: the declared type is the bytes' type; the model gets its canonical name.
        mimeType: declaredImageType(img.mimeType) ?? img.mimeType,
        size: img.size ?? Buffer.byteLength(data, "base64"),
      };
    }),
  };
}

/**
 * `document_changes` of a chat response or job result. Compact mode returns only `chunk_diffs`
 * (unshown-parts.md, Chat request): `updated_html` is left out even if the agent sent it, and so
 * is `changes`, the same records again; `requires_approval` is true for an approval job's result, whose
 * changes are all decided by then, so `pending_changes` is empty.
 */
export function documentChangesToJson(
  changes: agentV1.DocumentChanges,
  responseMode: "full" | "compact",
): DocumentChangesJson {
  return {
    ...(responseMode === "full" && changes.updatedHtml !== undefined && { updated_html: changes.updatedHtml }),
    version_id: changes.versionId,
    changes_summary: changes.changesSummary,
    requires_approval: changes.requiresApproval,
    pending_changes: [],
    ...(responseMode === "full" && { changes: changes.changes.map(changeRecordToJson) }),
    chunk_diffs: changes.chunkDiffs.map(changeRecordToJson),
    document_id: changes.documentId,
    ...(changes.concurrentMerges.length > 0 && {
      concurrent_merges: changes.concurrentMerges.map((m) => ({
        chunk_id: m.chunkId,
        status: m.status === "conflict" ? ("conflict" as const) : ("merged" as const),
        conflict_id: m.conflictId || undefined,
        document_id: m.documentId,
      })),
    }),
  };
}

/** POST /v1/chat 200 body: `{response, session_id, document_changes?, usage}`. */
export function chatResponseToJson(
  res: agentV1.ChatResponse,
  responseMode: "full" | "compact",
  plan: string,
): ChatResponseJson {
  return {
    response: res.response,
    session_id: res.sessionId,
    ...(res.documentChanges && { document_changes: documentChangesToJson(res.documentChanges, responseMode) }),
    usage: usageToJson(res.usage, plan),
  };
}

/**
 * The revert / redo-revert answer as the spec's RevertResponse; `attachments` are the session's
 * (as GET /v1/sessions/{session_id}/history gives them), listed in the restored document state.
 */
export function revertToJson(
  res: agentRevertV1.RevertSessionResponse,
  attachments: Record<string, unknown>[],
): z.output<typeof RevertResponseSchema> {
  const state = res.documentState;
  return {
    session_id: res.sessionId,
    reverted_to_turn: res.revertedToTurn,
    compose_text: res.composeText,
    archived_turn_count: res.archivedTurnCount,
    document_state: state
      ? {
          html_content: state.htmlContent,
          version_id: state.versionId,
          chunk_count: state.chunkCount,
          last_modified: state.lastModified ? state.lastModified.toISOString() : undefined,
          attachments,
        }
      : null,
    editor_action: res.editorAction === "update" ? "update" : "clear",
    redo_checkpoint_id: res.redoCheckpointId || undefined,
  };
}
