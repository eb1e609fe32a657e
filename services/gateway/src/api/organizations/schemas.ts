// Organizations, their members and keys (interface-spec Authentication rule 6, "not shown": ours
// to design). Roles: owner, admin, member. Owners and admins add and remove members and manage
// the organization's keys; every member reads the organization and its members.
import { isEmailAddress, MAX_EMAIL_CHARS } from "@redline/service-kit";
import { z } from "zod";
import { issueType } from "../../validation.js";
import { component, MAX_ID_CHARS } from "../shared/schemas.js";

/** Longest organization name (characters), as billing stores it. */
export const MAX_ORG_NAME_CHARS = 100;

const ROLE = z.enum(["owner", "admin", "member"]);

/** An organization as one of its members sees it. */
export const OrganizationSchema = component("Organization", {
  id: z.string().meta({ description: "The organization's id; its keys own what they create under this id." }),
  name: z.string().meta({ description: "Its unique name." }),
  plan: z.string().meta({ description: "Its plan: free, plus, pro or enterprise." }),
  role: ROLE.meta({ description: "The caller's role in it." }),
  created_at: z.string().meta({ format: "date-time", description: "When it was created." }),
});

export type OrganizationJson = z.output<typeof OrganizationSchema>;

/** GET /v1/organizations response. */
export const OrganizationListSchema = component("OrganizationList", {
  organizations: z.array(OrganizationSchema).meta({ description: "The caller's organizations, by name." }),
});

/** POST /v1/organizations body. */
export const CreateOrganizationSchema = component("CreateOrganizationRequest", {
  name: z
    .string()
    .trim()
    .min(1)
    .max(MAX_ORG_NAME_CHARS)
    .meta({ description: "A unique name (1 to 100 characters); a taken name is a 409." }),
});

/** A member of an organization. */
export const MemberSchema = component("OrganizationMember", {
  user_id: z.string().meta({ description: "The member's user id." }),
  name: z.string().meta({ description: "The member's account name." }),
  email: z.string().optional().meta({ description: "The member's email on file; left out when none." }),
  role: ROLE.meta({ description: "owner, admin or member." }),
});

export type MemberJson = z.output<typeof MemberSchema>;

/** GET /v1/organizations/{id}/members response. */
export const MemberListSchema = component("OrganizationMemberList", {
  members: z.array(MemberSchema).meta({ description: "Owners, then admins, then members, each by name." }),
});

/** POST /v1/organizations/{id}/members body: exactly one of user_id and email. */
export const AddMemberSchema = component("AddMemberRequest", {
  user_id: z.string().min(1).max(MAX_ID_CHARS).optional().meta({ description: "The user to add, by id." }),
  email: z
    .string()
    .trim()
    .max(MAX_EMAIL_CHARS)
    .refine(isEmailAddress, {
      message: "value is not a valid email address: one plain address such as name@example.com",
      ...issueType("value_error"),
    })
    .optional()
    .meta({ format: "email", description: "The user to add, by the email on file (PATCH /v1/users/me)." }),
  role: z
    .enum(["owner", "admin", "member"])
    .default("member")
    .meta({ description: "The new member's role (default member); only owners add owners." }),
}).refine((b) => (b.user_id === undefined) !== (b.email === undefined), {
  message: "send exactly one of user_id and email",
  path: [],
  ...issueType("value_error"),
});

/** PATCH /v1/organizations/{id}/members/{user_id} body. */
export const SetRoleSchema = component("SetMemberRoleRequest", {
  role: ROLE.meta({ description: "The new role; only owners make or change owners." }),
});

/** DELETE /v1/organizations/{id}/members/{user_id} response. */
export const MemberRemovedSchema = component("OrganizationMemberRemoved", {
  organization_id: z.string(),
  user_id: z.string(),
  removed: z.literal(true),
});

/** Path of /v1/organizations/{organization_id}. */
export const OrganizationPathSchema = z.object({
  organization_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The organization's id." }),
});

/** Path of /v1/organizations/{organization_id}/members/{user_id}. */
export const MemberPathSchema = OrganizationPathSchema.extend({
  user_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The member's user id." }),
});

/** Path of /v1/organizations/{organization_id}/api-keys/{key_id}. */
export const OrganizationKeyPathSchema = OrganizationPathSchema.extend({
  key_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The key's id." }),
});
