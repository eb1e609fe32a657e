// The caller's user account: GET /v1/users/me and PATCH /v1/users/me {email}. "Me" is always the
// API key's user, so no request can name another account.
import { required } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, endpoint } from "../shared/routes.js";
import { userAccountToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** GET /v1/users/me: the key's user id, organization (organization keys) and email on file. */
export const getUserRoute = defineRoute({
  ...endpoint("GET /v1/users/me", "getCurrentUser", "Read the caller's account", "users"),
  description: "The API key's user: its id, the organization the key acts for, and the email on file (if any).",
  ...answers(schemas.UserAccountSchema, "The caller's account.", [503]),
  async handle(_request, call) {
    const res = await call.ctx.billing.getUserAccount({}, call.rpc());
    return { body: userAccountToJson(required(res.account, "account")) };
  },
});

/**
 * PATCH /v1/users/me `{email}`: sets the email on file (null clears it); email exports without
 * recipient_email go there. 422 (validation body) for a malformed address.
 */
export const updateUserRoute = defineRoute({
  ...endpoint("PATCH /v1/users/me", "updateCurrentUser", "Set the caller's email on file", "users"),
  description:
    "Sets the email on file of the API key's user (null clears it). POST /v1/documents/export/email-request " +
    "without recipient_email mails the link there. A malformed address is a 422.",
  request: { body: schemas.UpdateUserSchema },
  ...answers(schemas.UserAccountSchema, "The account after the change.", [503]),
  async handle({ body }, call) {
    const res = await call.ctx.billing.setUserEmail({ email: body.email ?? "" }, call.rpc());
    return { body: userAccountToJson(required(res.account, "account")) };
  },
});

/** The users routes, in documentation order (api/index.ts mounts every area's list). */
export const usersRoutes: Route[] = [getUserRoute, updateUserRoute];
