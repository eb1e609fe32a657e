// FilesService.StartAgentHandoff (POST /v1/agents/handoff {email}).
import { startAgentHandoff as start } from "../commands/account-mail.js";
import type { FilesRpc } from "./call.js";

/** The link's id and expiry, its code mailed; 400 bad email, 409 not an agent account, 503 mail or billing down. */
export const startAgentHandoff: FilesRpc<"startAgentHandoff"> = (ctx, req, call) =>
  start(ctx, call.forward(), req.email);
