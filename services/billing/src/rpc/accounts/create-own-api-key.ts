// CreateOwnApiKey (POST /v1/api-keys): a personal key of the caller's user.
import { requirePrincipal } from "@redline/service-kit";
import { createOwnApiKey as create } from "../../commands/api-keys.js";
import { toCreatedApiKey } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The raw key (shown once) and its listing; INVALID_ARGUMENT (400) name over 100 characters, 409 key_limit. */
export const createOwnApiKey: AccountsRpc<"createOwnApiKey"> = async (ctx, req, call) =>
  toCreatedApiKey(
    await create(
      ctx.db,
      requirePrincipal(call),
      { name: req.name, readOnly: req.readOnly },
      ctx.accountLimits.maxKeysPerAccount,
    ),
  );
