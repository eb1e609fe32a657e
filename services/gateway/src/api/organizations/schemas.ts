// Organizations, their members and keys (interface-spec Authentication rule 6, "not shown": ours
// to design). Roles: owner, admin, member. Owners and admins invite and remove members and manage
// the organization's keys; every member reads the organization and its members. People join by
// accepting an invitation (issue #30).
import { z } from "zod";
import { issueType } from "../../validation.js";
import { component, emailAddress, MAX_ID_CHARS } from "../shared/schemas.js";

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
  email: z.string().optional().meta({
    description: "The member's verified email, when they chose to share it (share_email); left out otherwise.",
  }),
  role: ROLE.meta({ description: "owner, admin or member." }),
});

export type MemberJson = z.output<typeof MemberSchema>;

/** GET /v1/organizations/{id}/members response. */
export const MemberListSchema = component("OrganizationMemberList", {
  members: z.array(MemberSchema).meta({ description: "Owners, then admins, then members, each by name." }),
});

/** POST /v1/organizations/{id}/members body: exactly one of user_id and email. */
export const InviteMemberSchema = component("InviteMemberRequest", {
  user_id: z.string().min(1).max(MAX_ID_CHARS).optional().meta({ description: "The user to invite, by id." }),
  email: emailAddress.optional().meta({
    format: "email",
    description: "The person to invite, by email: the invitation is theirs once this is their verified email.",
  }),
  role: z
    .enum(["owner", "admin", "member"])
    .default("member")
    .meta({ description: "The role on acceptance (default member); only owners invite owners." }),
}).refine((b) => (b.user_id === undefined) !== (b.email === undefined), {
  message: "send exactly one of user_id and email",
  path: [],
  ...issueType("value_error"),
});

/** PATCH /v1/organizations/{id}/members/{user_id} body: role, share_email or both. */
export const UpdateMemberSchema = component("UpdateMemberRequest", {
  role: ROLE.optional().meta({ description: "The new role (owners and admins); only owners make or change owners." }),
  share_email: z
    .boolean()
    .optional()
    .meta({ description: "Show your verified email in the member list; only the member themself sets it." }),
}).refine((b) => b.role !== undefined || b.share_email !== undefined, {
  message: "send role, share_email or both",
  path: [],
  ...issueType("value_error"),
});

const INVITATION_STATUS = z.enum(["pending", "accepted", "declined", "revoked", "expired"]);

/** An invitation to join an organization. */
export const InvitationSchema = component("Invitation", {
  id: z.string().meta({ description: "The invitation's id: POST /v1/invitations/{id}/accept." }),
  organization_id: z.string().meta({ description: "The organization." }),
  organization_name: z.string().meta({ description: "Its name." }),
  email: z.string().optional().meta({ description: "The invitee as invited, by email; left out when by user id." }),
  user_id: z.string().optional().meta({ description: "The invitee as invited, by user id; left out when by email." }),
  role: ROLE.meta({ description: "The role on acceptance." }),
  status: INVITATION_STATUS.meta({ description: "pending, accepted, declined, revoked, or expired (7 days)." }),
  invited_by: z.string().meta({ description: "The inviter's account name." }),
  created_at: z.string().meta({ format: "date-time", description: "When it was made or last renewed." }),
  expires_at: z
    .string()
    .meta({ format: "date-time", description: "When a pending invitation stops being acceptable." }),
});

export type InvitationJson = z.output<typeof InvitationSchema>;

/** GET /v1/organizations/{id}/invitations and GET /v1/invitations response. */
export const InvitationListSchema = component("InvitationList", {
  invitations: z.array(InvitationSchema),
});

/** Path of /v1/organizations/{organization_id}/invitations/{invitation_id}. */
export const OrganizationInvitationPathSchema = z.object({
  organization_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The organization's id." }),
  invitation_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The invitation's id." }),
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
