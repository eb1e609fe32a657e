// The caller's own invitations: GET /v1/invitations, POST /v1/invitations/{id}/accept and
// /decline (issue #30). Joining an organization takes the invitee's own key: an invitation by
// email is theirs only while that address is their verified email, and one that is not the
// caller's answers 404, so no invitation can be probed for.
import { required } from "@redline/service-kit";
import { z } from "zod";
import { defineRoute, type Route } from "../../route-registry.js";
import { invitationToJson, memberToJson, organizationToJson } from "../organizations/mappers.js";
import { InvitationListSchema, InvitationSchema, MemberSchema, OrganizationSchema } from "../organizations/schemas.js";
import { answers, endpoint } from "../shared/routes.js";
import { component, MAX_ID_CHARS } from "../shared/schemas.js";

/** Path of /v1/invitations/{invitation_id}/…. */
const InvitationPathSchema = z.object({
  invitation_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The invitation's id." }),
});

/** POST /v1/invitations/{id}/accept body, optional. */
const AcceptObjectSchema = component("AcceptInvitationRequest", {
  share_email: z
    .boolean()
    .optional()
    .meta({ description: "Show your verified email in the organization's member list (default false)." }),
});

/** POST /v1/invitations/{id}/accept response. */
const AcceptedSchema = component("AcceptedInvitation", {
  organization: OrganizationSchema,
  member: MemberSchema,
});

/** GET /v1/invitations: the caller's pending invitations. */
export const listMyInvitationsRoute = defineRoute({
  ...endpoint("GET /v1/invitations", "listMyInvitations", "List your invitations", "invitations"),
  description:
    "Pending invitations to organizations that name the caller: by user id, or by the caller's verified email.",
  ...answers(InvitationListSchema, "The invitations, newest first.", [503]),
  async handle(_input, call) {
    const res = await call.ctx.accounts.listMyInvitations({}, call.rpc());
    return { body: { invitations: res.invitations.map(invitationToJson) } };
  },
});

/** POST /v1/invitations/{invitation_id}/accept `{share_email?}`. */
export const acceptInvitationRoute = defineRoute({
  ...endpoint("POST /v1/invitations/{invitation_id}/accept", "acceptInvitation", "Accept an invitation", "invitations"),
  description:
    "Joins the organization with the invitation's role, using a personal key (an organization key is a 403). " +
    "`share_email` shows your verified email to its members. An invitation that is not yours, expired or " +
    'already decided is a 404; already a member is a 409 (`code: "already_member"`).',
  request: { params: InvitationPathSchema, body: AcceptObjectSchema.optional() },
  ...answers(AcceptedSchema, "The organization joined and your membership.", [403, 404, 409, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.accounts.acceptInvitation(
      { invitationId: params.invitation_id, shareEmail: body?.share_email },
      call.rpc(),
    );
    return {
      body: {
        organization: organizationToJson(required(res.organization, "organization")),
        member: memberToJson(required(res.member, "member")),
      },
    };
  },
});

/** POST /v1/invitations/{invitation_id}/decline. */
export const declineInvitationRoute = defineRoute({
  ...endpoint(
    "POST /v1/invitations/{invitation_id}/decline",
    "declineInvitation",
    "Decline an invitation",
    "invitations",
  ),
  description: "Declines one of your pending invitations; one that is not yours, expired or decided is a 404.",
  request: { params: InvitationPathSchema },
  ...answers(InvitationSchema, "The invitation, declined.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.declineInvitation({ invitationId: params.invitation_id }, call.rpc());
    return { body: invitationToJson(required(res.invitation, "invitation")) };
  },
});

/** The invitations routes, in documentation order (api/index.ts mounts every area's list). */
export const invitationsRoutes: Route[] = [listMyInvitationsRoute, acceptInvitationRoute, declineInvitationRoute];
