// One synchronous chat turn (interface-spec endpoint 1; ARCHITECTURE "One chat turn"). Nothing
// is written until the engine has finished: the quota is reserved first, the document is loaded
// and the edits committed after, so a refused or failed turn leaves no partial state behind.
import type { agentV1 } from "@redline/grpc-stubs";
import { AiTimeoutError } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import { chatChargeKey } from "../turn/keys.js";
import { appendRequestOf, billedOperations, finishSyncTurn, withReservation } from "../turn/ledger.js";
import { sectionsChanged } from "../turn/operations.js";
import { commitTurn } from "../turn/persist.js";
import { prepareTurn, type TurnActor, turnCheckpoint } from "../turn/prepare.js";
import { aiTimeoutText, runTurn } from "../turn/run.js";

/**
 * Runs one chat turn for `actor`: reserve quota (429), resolve the session (403 for a foreign
 * id) and the target document (404), run the engine under the wall-clock cap (504), then store
 * the loaded content, commit the edits as one version, settle the charge (1 operation, plus 1
 * per 25 sections changed; 0 when nothing changed) and record the turn (finishSyncTurn: what a
 * stalled billing or sessions still owes then goes to the record outbox).
 */
export async function runChatTurn(
  ctx: AgentContext,
  actor: TurnActor,
  req: agentV1.ChatRequest,
): Promise<agentV1.ChatResponse> {
  const chargeKey = chatChargeKey();
  return withReservation(ctx, actor, chargeKey, async (held) => {
    const prepared = await prepareTurn(ctx, actor, req);
    const onProgress = (text: string) => actor.log.debug({ progress: text }, "turn progress");
    const { output } = await runTurn(ctx, prepared, { onProgress });
    if (!output) throw new AiTimeoutError(aiTimeoutText(ctx));
    const ops = prepared.working.operations();
    const { documentChanges, stored, attach } = await commitTurn(ctx, actor, prepared, true);
    // Edits that all met another session's commit (recorded as conflicts) changed nothing: free.
    const applied = ops.length > 0 && documentChanges?.changes.length === 0 ? 0 : ops.length;
    const operations = billedOperations(sectionsChanged(prepared.base, prepared.working, ops), applied);
    const append = appendRequestOf({
      chargeKey,
      operations,
      sessionId: prepared.sessionId,
      userMessage: req.message,
      reply: output.reply,
      checkpointVersionId: turnCheckpoint(prepared),
      documentId: documentChanges?.documentId ?? "",
      versionId: documentChanges?.versionId ?? "",
      title: stored?.title ?? prepared.target?.title ?? "",
      attach,
      // The memory note keeps the account's (or end-customer's) recent instructions, bounded.
      remember: true,
      memoryKey: req.crossSessionMemoryKey,
      memoryNoteSeen: prepared.memoryNote,
    });
    // Committed: from here the turn is answered, with what is still owed left to the record outbox.
    const { usage, turnIndex } = await finishSyncTurn(ctx, actor, { chargeKey, operations, append }, held);
    const response = output.reply;
    return {
      response,
      sessionId: prepared.sessionId,
      documentChanges,
      usage,
      turnIndex: turnIndex ?? -1,
      engine: ctx.engine.name,
    };
  });
}
