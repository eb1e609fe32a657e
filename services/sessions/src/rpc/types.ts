// The shape every RPC file shares, and the call options of a workflow's documents calls.
import type { CallContext } from "@redline/service-kit";
import type { SessionsContext } from "../context.js";

/** One RPC: the service context, the request, the call (principal, deadline, forwarding). */
export type Rpc<Req, Res> = (ctx: SessionsContext, req: Req, call: CallContext) => Promise<Res>;

/** Deadline of the documents writes behind a workflow when the caller set none (big documents take seconds). */
const DOCUMENT_WRITE_TIMEOUT_MS = 120_000;

/** Call options for documents: the caller's identity, and what is left of the call's deadline. */
export function downstream(call: CallContext) {
  const left = call.deadline ? call.deadline.getTime() - Date.now() : DOCUMENT_WRITE_TIMEOUT_MS;
  return call.forward({ timeoutMs: Math.max(1, left) });
}
