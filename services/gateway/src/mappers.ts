// Proto ↔ JSON mappers of the gateway: request bodies into RPC requests, RPC responses into the
// spec's snake_case JSON. Pure functions; the output types come from the response schemas.
import type { agentV1, billingV1, documentsV1, sessionsV1 } from "@redline/grpc-stubs";
import {
  type ChangeRecordJson,
  type ChatRequestBody,
  type ChatResponseJson,
  type DocumentChangesJson,
  type DocumentStateJson,
  type HistoryMessageJson,
  normalizeBase64,
  type SessionSummaryJson,
  type UsageJson,
} from "./schemas.js";

function iso(date: Date | undefined): string | null {
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

/**
 * The agent's ChatRequest from a validated /v1/chat body: null and absent become proto defaults,
 * the upload's base64 is decoded to bytes (`upload.content`), image data loses any data: prefix.
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
        mimeType: img.mimeType,
        size: img.size ?? Buffer.byteLength(data, "base64"),
      };
    }),
  };
}

const OPERATIONS: readonly string[] = ["edit", "create", "delete"];

function isOperation(value: string): value is ChangeRecordJson["operation"] {
  return OPERATIONS.includes(value);
}

/** A change record in snake_case; `insert_after_chunk_id` only on creates (null at the start). */
export function changeRecordToJson(record: documentsV1.ChangeRecord): ChangeRecordJson {
  const operation = isOperation(record.operation) ? record.operation : "edit";
  return {
    change_id: record.changeId,
    operation,
    chunk_id: record.chunkId,
    document_id: record.documentId,
    old_html: record.oldHtml,
    new_html: record.newHtml,
    ai_explanation: record.aiExplanation,
    ...(operation === "create" && { insert_after_chunk_id: record.insertAfterChunkId || null }),
  };
}

/**
 * `document_changes` of a chat response or job result. `updated_html` is left out in compact
 * mode even if the agent sent it; `requires_approval` is true for an approval job's result, whose
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
    changes: changes.changes.map(changeRecordToJson),
    chunk_diffs: changes.chunkDiffs.map(changeRecordToJson),
    document_id: changes.documentId,
    ...(changes.concurrentMerges.length > 0 && {
      concurrent_merges: changes.concurrentMerges.map((m) => ({
        chunk_id: m.chunkId,
        status: m.status === "conflict" ? ("conflict" as const) : ("merged" as const),
        conflict_id: m.conflictId || null,
        document_id: m.documentId,
      })),
    }),
  };
}

/** The spec's usage object; a missing usage (should not happen) reads as zeros on `plan`. */
export function usageToJson(usage: billingV1.Usage | undefined, plan: string): UsageJson {
  return {
    monthly_used: usage?.monthlyUsed ?? 0,
    monthly_limit: usage?.monthlyLimit ?? 0,
    monthly_remaining: usage?.monthlyRemaining ?? 0,
    was_billable: usage?.wasBillable ?? false,
    ops_charged: usage?.opsCharged ?? 0,
    quota_exhausted: usage?.quotaExhausted ?? false,
    subscription_tier: usage?.subscriptionTier || plan,
    bucket_used: usage?.bucketUsed || "none",
    redemption_id: null,
    promotions: [],
  };
}

/** X-Usage-Limit, X-Usage-Used and X-Usage-Remaining for a usage object (Errors rule 2). */
export function usageHeaders(usage: UsageJson): Record<string, string> {
  return {
    "X-Usage-Limit": String(usage.monthly_limit),
    "X-Usage-Used": String(usage.monthly_used),
    "X-Usage-Remaining": String(usage.monthly_remaining),
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

/** One GET /v1/sessions entry; `document_count` is the roster size. */
export function sessionSummaryToJson(session: sessionsV1.Session): SessionSummaryJson {
  return {
    session_id: session.sessionId,
    title: session.title,
    created_at: iso(session.createdAt),
    last_updated: iso(session.updatedAt ?? session.createdAt),
    message_count: session.messageCount,
    document_count: session.roster.length,
  };
}

/** One history message; an empty checkpoint id becomes null. */
export function historyMessageToJson(message: sessionsV1.Message): HistoryMessageJson {
  return {
    id: message.id,
    sender: message.sender === "user" ? "user" : "ai",
    content: message.content,
    timestamp: iso(message.timestamp),
    turn_index: message.turnIndex,
    checkpoint_id: message.checkpointId || null,
  };
}

/**
 * The roster entry a history restore shows: the entry whose durable (or slot) id is
 * `focusDocumentId` when it is open in the session, else the focused entry, else the first.
 */
export function pickRosterEntry(
  roster: sessionsV1.RosterEntry[],
  focusDocumentId: string | undefined,
): sessionsV1.RosterEntry | undefined {
  if (focusDocumentId) {
    const asked =
      roster.find((e) => e.durableDocumentId === focusDocumentId) ??
      roster.find((e) => e.documentId === focusDocumentId);
    if (asked) return asked;
  }
  return roster.find((e) => e.focused) ?? roster[0];
}

/** The HTML of a document: its chunks' outer HTML joined with "\n" (chunk ids kept). */
export function chunksToHtml(chunks: documentsV1.Chunk[]): string {
  return chunks.map((c) => c.html).join("\n");
}

/**
 * `document_state` of the history response for a roster entry and, when it has been saved, the
 * document read at head with chunks. A blank tab (no durable id yet) reads as empty content.
 */
export function documentStateToJson(
  entry: sessionsV1.RosterEntry,
  doc: documentsV1.GetDocumentResponse | undefined,
  includeHtml: boolean,
): DocumentStateJson {
  const meta = doc?.document;
  return {
    document_id: entry.documentId,
    durable_document_id: entry.durableDocumentId || null,
    title: meta?.title || entry.title,
    ...(includeHtml && { html_content: doc ? chunksToHtml(doc.chunks) : "" }),
    version_id: meta?.versionId || entry.lastSeenVersionId || null,
    chunk_count: meta?.chunkCount ?? 0,
    last_modified: iso(meta?.updatedAt ?? entry.openedAt),
    attachments: [],
  };
}
