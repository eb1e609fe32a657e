// The caller's user account: GET /v1/users/me, PATCH /v1/users/me {email} and POST
// /v1/users/me/email/verify {code}. "Me" is always the API key's user, so no request can name
// another account. A new email is stored unverified and a code is mailed to it (issue #30): only
// a verified email identifies the user (invitations, email exports without recipient_email).
import { required } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { usageOn429 } from "../shared/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { userAccountToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** GET /v1/users/me: the key's user id, organization (organization keys), email on file and its verification. */
export const getUserRoute = defineRoute({
  ...endpoint("GET /v1/users/me", "getCurrentUser", "Read the caller's account", "users"),
  description:
    "The API key's user: its id, the organization the key acts for, the email on file (if any) and when it was " +
    "verified.",
  ...answers(schemas.UserAccountSchema, "The caller's account.", [503]),
  async handle(_request, call) {
    const res = await call.ctx.accounts.getUserAccount({}, call.rpc());
    return { body: userAccountToJson(required(res.account, "account")) };
  },
});

/**
 * PATCH /v1/users/me `{email}`: sets the email on file, unverified, and mails it a code (null
 * clears it). 422 malformed, 403 an agent's key, 429 verification_limit, 503 mail down.
 */
export const updateUserRoute = defineRoute({
  ...endpoint("PATCH /v1/users/me", "updateCurrentUser", "Set the caller's email on file", "users"),
  description:
    "Sets the email on file of the API key's user (null clears it). A new address is stored unverified and an " +
    "8-digit code valid one hour is mailed to it; POST /v1/users/me/email/verify proves it. Setting the same " +
    "unverified address again mails a new code (at most 5 per hour); the same verified address changes nothing. " +
    "An agent's key cannot set the email (403): the human who takes the account over does. A malformed address " +
    "is a 422.",
  request: { body: schemas.UpdateUserSchema },
  ...answers(schemas.UserAccountSchema, "The account after the change.", [403, schemas.VerificationLimitResponse, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.files.updateUserEmail({ email: body.email ?? "" }, call.rpc()).catch(usageOn429(call));
    return { body: userAccountToJson(required(res.account, "account")) };
  },
});

/** POST /v1/users/me/email/verify `{code}`: proves the email on file. */
export const verifyEmailRoute = defineRoute({
  ...endpoint("POST /v1/users/me/email/verify", "verifyCurrentUserEmail", "Verify the caller's email", "users"),
  description:
    "With the code mailed by PATCH /v1/users/me, marks the email on file verified. A wrong code is a 403 stating " +
    "the attempts left; the fifth wrong code disables it (410: set the email again for a new one); no pending " +
    "code is a 404.",
  request: { body: schemas.VerifyEmailSchema },
  ...answers(schemas.UserAccountSchema, "The account, its email verified.", [...schemas.VerifyErrors, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.accounts.verifyUserEmail({ code: body.code }, call.rpc());
    return { body: userAccountToJson(required(res.account, "account")) };
  },
});

/** The users routes, in documentation order (api/index.ts mounts every area's list). */
export const usersRoutes: Route[] = [getUserRoute, updateUserRoute, verifyEmailRoute];
