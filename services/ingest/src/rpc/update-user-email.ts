// FilesService.UpdateUserEmail (PATCH /v1/users/me {email}).
import { updateUserEmail as update } from "../commands/account-mail.js";
import type { FilesRpc } from "./call.js";

/** The account after the change, its verification code mailed; 400, 403, 429 from billing; 503 mail or billing down. */
export const updateUserEmail: FilesRpc<"updateUserEmail"> = (ctx, req, call) => update(ctx, call.forward(), req.email);
