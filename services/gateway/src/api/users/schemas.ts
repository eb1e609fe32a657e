// The caller's user account (GET and PATCH /v1/users/me): not shown by interface-spec.md, so ours
// to design; it holds the email on file that email exports without recipient_email go to.
import { isEmailAddress, MAX_EMAIL_CHARS } from "@redline/service-kit";
import { z } from "zod";
import { issueType } from "../../validation.js";
import { component } from "../shared/schemas.js";

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
        "The email on file: POST /v1/documents/export/email-request without recipient_email mails there. " +
        "Left out when none is set.",
    }),
});

export type UserAccountJson = z.output<typeof UserAccountSchema>;

/** PATCH /v1/users/me body. */
export const UpdateUserSchema = component("UpdateUserRequest", {
  email: z
    .string()
    .trim()
    .max(MAX_EMAIL_CHARS)
    .refine(isEmailAddress, {
      message: "value is not a valid email address: one plain address such as name@example.com",
      ...issueType("value_error"),
    })
    .meta({ format: "email" })
    .nullable()
    .meta({ description: "One plain address (at most 254 characters); null clears the email on file." }),
});
