// Organizations under /v1/organizations: create one (the caller owns it), list and read them,
// their members (owners and admins invite and remove; people join by accepting, see
// api/invitations/), and their keys (owners and admins manage; members use the keys they are
// given). A caller who is not a member gets 404 for everything of the organization; a member
// whose role does not allow the action gets 403.
import { required } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { apiKeyToJson, createdApiKeyToJson } from "../api-keys/mappers.js";
import * as keySchemas from "../api-keys/schemas.js";
import { answers, endpoint } from "../shared/routes.js";
import { invitationToJson, memberToJson, organizationToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** POST /v1/organizations `{name}`: the caller's user becomes its owner. */
export const createOrganizationRoute = defineRoute({
  ...endpoint("POST /v1/organizations", "createOrganization", "Create an organization", "organizations"),
  description:
    "Creates an organization; the caller's user is its owner. It starts on the operator's plan for new " +
    "organizations (NEW_ORGANIZATION_PLAN, default `none`: no operations until an operator grants a plan). A " +
    'taken name is a 409 (`code: "name_taken"`), and so is a user past the organizations they may create ' +
    '(MAX_ORGANIZATIONS_PER_USER, default 3; `code: "organization_limit"`).',
  request: { body: schemas.CreateOrganizationSchema },
  ...answers(schemas.OrganizationSchema, { status: 201, description: "The new organization." }, [403, 409, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.accounts.createOrganization({ name: body.name }, call.rpc());
    return { status: 201, body: organizationToJson(required(res.organization, "organization")) };
  },
});

/** GET /v1/organizations. */
export const listOrganizationsRoute = defineRoute({
  ...endpoint("GET /v1/organizations", "listOrganizations", "List your organizations", "organizations"),
  description: "The organizations of the caller's user with its role in each (only its own with an organization key).",
  ...answers(schemas.OrganizationListSchema, "The organizations.", [503]),
  async handle(_input, call) {
    const res = await call.ctx.accounts.listOrganizations({}, call.rpc());
    return { body: { organizations: res.organizations.map(organizationToJson) } };
  },
});

/** GET /v1/organizations/{organization_id}. */
export const getOrganizationRoute = defineRoute({
  ...endpoint("GET /v1/organizations/{organization_id}", "getOrganization", "Read an organization", "organizations"),
  request: { params: schemas.OrganizationPathSchema },
  ...answers(schemas.OrganizationSchema, "The organization.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.getOrganization({ organizationId: params.organization_id }, call.rpc());
    return { body: organizationToJson(required(res.organization, "organization")) };
  },
});

/** GET /v1/organizations/{organization_id}/members. */
export const listMembersRoute = defineRoute({
  ...endpoint(
    "GET /v1/organizations/{organization_id}/members",
    "listOrganizationMembers",
    "List an organization's members",
    "organizations",
  ),
  request: { params: schemas.OrganizationPathSchema },
  ...answers(schemas.MemberListSchema, "The members.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.listMembers({ organizationId: params.organization_id }, call.rpc());
    return { body: { members: res.members.map(memberToJson) } };
  },
});

/** POST /v1/organizations/{organization_id}/members `{user_id | email, role?}`: an invitation. */
export const addMemberRoute = defineRoute({
  ...endpoint(
    "POST /v1/organizations/{organization_id}/members",
    "addOrganizationMember",
    "Invite a member",
    "organizations",
  ),
  description:
    "Owners and admins invite a person, by user id or by email, as admin or member (only owners invite owners). " +
    "Nobody joins until they accept with their own key (POST /v1/invitations/{id}/accept); an invitation by email " +
    "is theirs only once that is their verified email. The answer is the same whether or not the invitee exists; " +
    "inviting again renews the pending invitation. 403 for a plain member; 409 `already_member` (by user id) or " +
    "`invitation_limit` (100 pending).",
  request: { params: schemas.OrganizationPathSchema, body: schemas.InviteMemberSchema },
  ...answers(schemas.InvitationSchema, { status: 201, description: "The pending invitation." }, [403, 404, 409, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.accounts.inviteMember(
      { organizationId: params.organization_id, userId: body.user_id ?? "", email: body.email ?? "", role: body.role },
      call.rpc(),
    );
    return { status: 201, body: invitationToJson(required(res.invitation, "invitation")) };
  },
});

/** GET /v1/organizations/{organization_id}/invitations. */
export const listInvitationsRoute = defineRoute({
  ...endpoint(
    "GET /v1/organizations/{organization_id}/invitations",
    "listOrganizationInvitations",
    "List an organization's invitations",
    "organizations",
  ),
  description: "Owners and admins: the invitations of the last 30 days, pending first, then newest first.",
  request: { params: schemas.OrganizationPathSchema },
  ...answers(schemas.InvitationListSchema, "The invitations.", [403, 404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.listOrganizationInvitations(
      { organizationId: params.organization_id },
      call.rpc(),
    );
    return { body: { invitations: res.invitations.map(invitationToJson) } };
  },
});

/** DELETE /v1/organizations/{organization_id}/invitations/{invitation_id}. */
export const revokeInvitationRoute = defineRoute({
  ...endpoint(
    "DELETE /v1/organizations/{organization_id}/invitations/{invitation_id}",
    "revokeOrganizationInvitation",
    "Withdraw an invitation",
    "organizations",
  ),
  description: "Owners and admins withdraw a pending invitation; an unknown or already decided one is a 404.",
  request: { params: schemas.OrganizationInvitationPathSchema },
  ...answers(schemas.InvitationSchema, "The invitation, revoked.", [403, 404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.revokeInvitation(
      { organizationId: params.organization_id, invitationId: params.invitation_id },
      call.rpc(),
    );
    return { body: invitationToJson(required(res.invitation, "invitation")) };
  },
});

/** PATCH /v1/organizations/{organization_id}/members/{user_id} `{role?, share_email?}`. */
export const setRoleRoute = defineRoute({
  ...endpoint(
    "PATCH /v1/organizations/{organization_id}/members/{user_id}",
    "setOrganizationMemberRole",
    "Change a member's role",
    "organizations",
  ),
  description:
    "Owners and admins change a member's role; only owners make an owner or change one. Demoting the last " +
    "owner is a 409. A member sets their own `share_email` (whether their verified email shows in the member list).",
  request: { params: schemas.MemberPathSchema, body: schemas.UpdateMemberSchema },
  ...answers(schemas.MemberSchema, "The member after the change.", [403, 404, 409, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.accounts.updateMember(
      { organizationId: params.organization_id, userId: params.user_id, role: body.role, shareEmail: body.share_email },
      call.rpc(),
    );
    return { body: memberToJson(required(res.member, "member")) };
  },
});

/** DELETE /v1/organizations/{organization_id}/members/{user_id}. */
export const removeMemberRoute = defineRoute({
  ...endpoint(
    "DELETE /v1/organizations/{organization_id}/members/{user_id}",
    "removeOrganizationMember",
    "Remove a member",
    "organizations",
  ),
  description:
    "Owners and admins remove members (only owners remove owners); any member may remove themself. The member's " +
    "keys for the organization are revoked. The last owner cannot leave (409).",
  request: { params: schemas.MemberPathSchema },
  ...answers(schemas.MemberRemovedSchema, "Removed.", [403, 404, 409, 503]),
  async handle({ params }, call) {
    await call.ctx.accounts.removeMember(
      { organizationId: params.organization_id, userId: params.user_id },
      call.rpc(),
    );
    return { body: { organization_id: params.organization_id, user_id: params.user_id, removed: true as const } };
  },
});

/** POST /v1/organizations/{organization_id}/api-keys `{name?, read_only?}`. */
export const createOrganizationKeyRoute = defineRoute({
  ...endpoint(
    "POST /v1/organizations/{organization_id}/api-keys",
    "createOrganizationApiKey",
    "Create an organization key",
    "organizations",
  ),
  description:
    "Owners and admins create a key that acts for the organization: what it creates is the organization's and " +
    "its usage counts against the organization's plan. The `key` is in this response only.",
  request: { params: schemas.OrganizationPathSchema, body: keySchemas.CreateApiKeySchema },
  ...answers(keySchemas.CreatedApiKeySchema, { status: 201, description: "The new key, shown once." }, [403, 404, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.accounts.createOrganizationApiKey(
      { organizationId: params.organization_id, name: body.name ?? "", readOnly: body.read_only },
      call.rpc(),
    );
    return { status: 201, body: createdApiKeyToJson(res) };
  },
});

/** GET /v1/organizations/{organization_id}/api-keys. */
export const listOrganizationKeysRoute = defineRoute({
  ...endpoint(
    "GET /v1/organizations/{organization_id}/api-keys",
    "listOrganizationApiKeys",
    "List an organization's keys",
    "organizations",
  ),
  description: "Owners and admins: the organization's active keys, newest first, without the keys themselves.",
  request: { params: schemas.OrganizationPathSchema },
  ...answers(keySchemas.ApiKeyListSchema, "The keys.", [403, 404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.accounts.listOrganizationApiKeys({ organizationId: params.organization_id }, call.rpc());
    return { body: { api_keys: res.keys.map(apiKeyToJson) } };
  },
});

/** DELETE /v1/organizations/{organization_id}/api-keys/{key_id}. */
export const revokeOrganizationKeyRoute = defineRoute({
  ...endpoint(
    "DELETE /v1/organizations/{organization_id}/api-keys/{key_id}",
    "revokeOrganizationApiKey",
    "Revoke an organization key",
    "organizations",
  ),
  description: "Owners and admins revoke one of the organization's keys; a key of anyone else is a 404.",
  request: { params: schemas.OrganizationKeyPathSchema },
  ...answers(keySchemas.ApiKeyRevokedSchema, "Revoked.", [403, 404, 503]),
  async handle({ params }, call) {
    await call.ctx.accounts.revokeOrganizationApiKey(
      { organizationId: params.organization_id, id: params.key_id },
      call.rpc(),
    );
    return { body: { id: params.key_id, revoked: true as const } };
  },
});

/** The organizations routes, in documentation order (api/index.ts mounts every area's list). */
export const organizationsRoutes: Route[] = [
  createOrganizationRoute,
  listOrganizationsRoute,
  getOrganizationRoute,
  listMembersRoute,
  addMemberRoute,
  listInvitationsRoute,
  revokeInvitationRoute,
  setRoleRoute,
  removeMemberRoute,
  createOrganizationKeyRoute,
  listOrganizationKeysRoute,
  revokeOrganizationKeyRoute,
];
