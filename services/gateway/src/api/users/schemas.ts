// The caller's user account (GET and PATCH /v1/users/me): not shown by interface-spec.md, so ours
// to design; it holds the email on file that email exports without recipient_email go to.
import { z } from "zod";
import { component, ErrorSchema, emailAddress } from "../shared/schemas.js";

/** The caller's user account. Strings without a value are left out, never null. */
export const UserAccountSchema = component("UserAccount", {
  user_id: z.string().meta({ description: "The user the API key belongs to." }),
  organization_id: z
    .string()
    .optional()
    .meta({ description: "The organization the key acts for; left out for personal keys." }),
  email: z
    .string()
    .optional()
    .meta({
      description:
        "The email on file; left out when none is set. Once verified, POST /v1/documents/export/email-request " +
        "without recipient_email mails there, and invitations to it become this user's.",
    }),
  email_verified_at: z
    .string()
    .optional()
    .meta({
      format: "date-time",
      description:
        "When the email was verified (the code mailed to it came back, or a takeover claimed through it); " +
        "left out while it is unverified.",
    }),
});

export type UserAccountJson = z.output<typeof UserAccountSchema>;

/** PATCH /v1/users/me body. */
export const UpdateUserSchema = component("UpdateUserRequest", {
  email: emailAddress
    .meta({ format: "email" })
    .nullable()
    .meta({
      description:
        "One plain address (at most 254 characters): it is stored unverified and an 8-digit code is mailed to it " +
        "(POST /v1/users/me/email/verify). null clears the email on file.",
    }),
});

/** POST /v1/users/me/email/verify body. */
export const VerifyEmailSchema = component("VerifyEmailRequest", {
  code: z.string().trim().min(1).max(64).meta({ description: "The code from the verification mail." }),
});

/** 429 of PATCH /v1/users/me: `{detail, code: "verification_limit"}` with Retry-After. */
export const VerificationLimitResponse = {
  status: 429,
  description:
    'Too many verification mails of this account in the last hour: `{detail, code: "verification_limit"}` with a ' +
    "Retry-After header (seconds) and the account's X-Usage-* headers.",
  schema: ErrorSchema,
};

/** The verification's 403, 404 and 410 (as a takeover code's: interface-spec Authentication rule 5). */
export const VerifyErrors = [
  {
    status: 403,
    description: "Wrong code (the detail states the attempts left), or an agent's key (code agent_key).",
    schema: ErrorSchema,
  },
  { status: 404, description: "No verification is pending (none sent, expired or used).", schema: ErrorSchema },
  {
    status: 410,
    description: "The code is disabled after too many wrong codes; set the email again for a new one.",
    schema: ErrorSchema,
  },
];
