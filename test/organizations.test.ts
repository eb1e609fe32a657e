// Organizations over HTTP (interface-spec Authentication rule 6, ours to design) on the real
// stack: the creator owns it; owners and admins invite users (by id or by email) and nobody
// joins without accepting with their own key (issue #30); they remove members and manage the
// organization's keys; members read it and use its keys; a removed member's organization keys
// stop working at once; non-members get 404 for everything. A new organization has no free
// operations until the operator grants it a plan.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "organizations", authCacheTtlMs: 0 });
});
afterAll(async () => {
  await stack?.close();
});

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A user's personal key and user id (with `email` on file and verified when given). */
async function user(name: string, email?: string): Promise<{ key: string; id: string }> {
  const key = await stack.createKey(name);
  if (email) await stack.verifyEmail(key, email);
  const me = await json(await stack.call("GET", "/v1/users/me", { key }), 200);
  return { key, id: me.user_id as string };
}

describe("organizations", () => {
  let owner: { key: string; id: string };
  let admin: { key: string; id: string };
  let member: { key: string; id: string };
  let outsider: { key: string; id: string };
  let orgId: string;
  const path = (rest = "") => `/v1/organizations/${orgId}${rest}`;

  /** Invites with `by`'s key; the 201 invitation. */
  async function invite(by: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return json(await stack.call("POST", path("/members"), { key: by, body }), 201);
  }

  beforeAll(async () => {
    owner = await user("org-olivia");
    admin = await user("org-adam");
    member = await user("org-mia", "mia@example.com");
    outsider = await user("org-oscar");
  });

  it("creates an organization owned by its creator, on the plan without operations; a taken name is a 409", async () => {
    const org = await json(
      await stack.call("POST", "/v1/organizations", { key: owner.key, body: { name: "acme" } }),
      201,
    );
    expect(org).toMatchObject({ name: "acme", plan: "none", role: "owner" });
    orgId = org.id as string;
    const dup = await stack.call("POST", "/v1/organizations", { key: admin.key, body: { name: "acme" } });
    expect((await json(dup, 409)).code).toBe("name_taken");
    await json(await stack.call("POST", "/v1/organizations", { key: owner.key, body: { name: "  " } }), 422);
    const list = await json(await stack.call("GET", "/v1/organizations", { key: owner.key }), 200);
    expect(list.organizations).toEqual([org]);
  });

  it("invites users by id and by email; they join only when they accept, with the invited role", async () => {
    const byId = await invite(owner.key, { user_id: admin.id, role: "admin" });
    expect(byId).toMatchObject({ organization_id: orgId, user_id: admin.id, role: "admin", status: "pending" });
    const byEmail = await invite(owner.key, { email: "MIA@example.com" });
    expect(byEmail).toMatchObject({ email: "MIA@example.com", role: "member", status: "pending" });
    expect(byEmail).not.toHaveProperty("user_id");

    // Nobody is a member yet: an invitation is an offer.
    const before = await json(await stack.call("GET", path("/members"), { key: owner.key }), 200);
    expect((before.members as { user_id: string }[]).map((x) => x.user_id)).toEqual([owner.id]);
    const pending = await json(await stack.call("GET", path("/invitations"), { key: owner.key }), 200);
    expect((pending.invitations as { id: string }[]).map((i) => i.id).sort()).toEqual([byId.id, byEmail.id].sort());

    // The invitees see their own invitations, and only theirs.
    const mine = await json(await stack.call("GET", "/v1/invitations", { key: member.key }), 200);
    expect((mine.invitations as { id: string }[]).map((i) => i.id)).toEqual([byEmail.id]);
    await json(await stack.call("POST", `/v1/invitations/${byId.id}/accept`, { key: member.key }), 404);
    const accepted = await json(
      await stack.call("POST", `/v1/invitations/${byId.id}/accept`, { key: admin.key, body: {} }),
      200,
    );
    expect(accepted).toMatchObject({ organization: { id: orgId, role: "admin" }, member: { user_id: admin.id } });
    await json(
      await stack.call("POST", `/v1/invitations/${byEmail.id}/accept`, {
        key: member.key,
        body: { share_email: true },
      }),
      200,
    );
    await json(await stack.call("POST", `/v1/invitations/${byEmail.id}/accept`, { key: member.key }), 404);

    const again = await stack.call("POST", path("/members"), { key: admin.key, body: { user_id: member.id } });
    expect((await json(again, 409)).code).toBe("already_member");
    const both = await stack.call("POST", path("/members"), {
      key: admin.key,
      body: { user_id: outsider.id, email: "mia@example.com" },
    });
    await json(both, 422);
    const adminMakesOwner = await stack.call("POST", path("/members"), {
      key: admin.key,
      body: { user_id: outsider.id, role: "owner" },
    });
    await json(adminMakesOwner, 403);

    const members = await json(await stack.call("GET", path("/members"), { key: member.key }), 200);
    expect(members.members).toEqual([
      { user_id: owner.id, name: "org-olivia", role: "owner" },
      { user_id: admin.id, name: "org-adam", role: "admin" },
      { user_id: member.id, name: "org-mia", email: "mia@example.com", role: "member" },
    ]);
    const seen = await json(await stack.call("GET", path(), { key: member.key }), 200);
    expect(seen).toMatchObject({ id: orgId, role: "member" });
  });

  it("lets the invitee decline and the inviter revoke; a decided invitation is gone", async () => {
    const declined = await invite(admin.key, { user_id: outsider.id });
    expect(
      await json(await stack.call("POST", `/v1/invitations/${declined.id}/decline`, { key: outsider.key }), 200),
    ).toMatchObject({ id: declined.id, status: "declined" });
    await json(await stack.call("POST", `/v1/invitations/${declined.id}/accept`, { key: outsider.key }), 404);

    const revoked = await invite(admin.key, { user_id: outsider.id });
    const gone = await stack.call("DELETE", path(`/invitations/${revoked.id}`), { key: owner.key });
    expect(await json(gone, 200)).toMatchObject({ id: revoked.id, status: "revoked" });
    await json(await stack.call("DELETE", path(`/invitations/${revoked.id}`), { key: owner.key }), 404);
    await json(await stack.call("POST", `/v1/invitations/${revoked.id}/accept`, { key: outsider.key }), 404);
    const mine = await json(await stack.call("GET", "/v1/invitations", { key: outsider.key }), 200);
    expect(mine.invitations).toEqual([]);
  });

  it("hides the organization from non-members (404) and refuses plain members admin actions (403)", async () => {
    for (const [method, rest, body] of [
      ["GET", "", undefined],
      ["GET", "/members", undefined],
      ["POST", "/members", { user_id: outsider.id }],
      ["GET", "/invitations", undefined],
      ["GET", "/api-keys", undefined],
      ["POST", "/api-keys", {}],
      ["DELETE", `/members/${member.id}`, undefined],
    ] as const) {
      await json(await stack.call(method, path(rest), { key: outsider.key, body }), 404);
    }
    await json(await stack.call("GET", "/v1/organizations/not-an-id", { key: owner.key }), 404);
    const list = await json(await stack.call("GET", "/v1/organizations", { key: outsider.key }), 200);
    expect(list.organizations).toEqual([]);

    const add = await stack.call("POST", path("/members"), { key: member.key, body: { user_id: outsider.id } });
    expect((await json(add, 403)).detail).toMatch(/owners and admins/);
    await json(await stack.call("GET", path("/invitations"), { key: member.key }), 403);
    await json(await stack.call("POST", path("/api-keys"), { key: member.key, body: {} }), 403);
    await json(await stack.call("GET", path("/api-keys"), { key: member.key }), 403);
    await json(await stack.call("DELETE", path(`/members/${admin.id}`), { key: member.key }), 403);
  });

  it("lets admins manage the organization's keys, which act for the organization", async () => {
    const created = await json(
      await stack.call("POST", path("/api-keys"), { key: admin.key, body: { name: "shared" } }),
      201,
    );
    expect(created).toMatchObject({ name: "shared", organization_id: orgId, read_only: false });
    const orgKey = created.key as string;
    const me = await json(await stack.call("GET", "/v1/users/me", { key: orgKey }), 200);
    expect(me).toEqual({ user_id: admin.id, organization_id: orgId });

    // What the organization key creates belongs to the organization, not to the admin's own account.
    await json(await stack.call("POST", "/v1/sessions/init", { key: orgKey, body: { session_id: "org-s1" } }), 200);
    // The organization's plan grants nothing until the operator sets one: the chat is a 429.
    const chat = { key: orgKey, body: { session_id: "org-s1", message: "Write a short welcome note." } };
    const refused = await json(await stack.call("POST", "/v1/chat", chat), 429);
    expect(refused.detail).toMatch(/admin accounts set-plan/);
    await stack.billing.setAccountPlan({
      account: { accountId: orgId, user: "", organization: "" },
      plan: "free",
      anchorDay: 0,
    });
    await json(await stack.call("POST", "/v1/chat", chat), 200);
    await json(await stack.call("GET", "/v1/sessions/org-s1/history", { key: admin.key }), 404);
    await json(await stack.call("GET", "/v1/sessions/org-s1/history", { key: orgKey }), 200);

    const listed = await json(await stack.call("GET", path("/api-keys"), { key: owner.key }), 200);
    expect((listed.api_keys as { id: string }[]).map((k) => k.id)).toEqual([created.id]);
    // Not a personal key of the admin: /v1/api-keys neither lists nor revokes it.
    const own = await json(await stack.call("GET", "/v1/api-keys", { key: admin.key }), 200);
    expect((own.api_keys as { id: string }[]).map((k) => k.id)).not.toContain(created.id);
    await json(await stack.call("DELETE", `/v1/api-keys/${created.id}`, { key: admin.key }), 404);

    // An organization key sees only its organization.
    const other = await json(
      await stack.call("POST", "/v1/organizations", { key: admin.key, body: { name: "other" } }),
      201,
    );
    await json(await stack.call("GET", `/v1/organizations/${other.id}`, { key: orgKey }), 404);
    await json(
      await stack.call("DELETE", `/v1/organizations/${other.id}/api-keys/${created.id}`, { key: admin.key }),
      404,
    );

    await json(await stack.call("DELETE", path(`/api-keys/${created.id}`), { key: owner.key }), 200);
    await json(await stack.call("GET", "/v1/users/me", { key: orgKey }), 401);
  });

  it("removes members and revokes their organization keys; the last owner stays", async () => {
    const membersKey = await stack.createKey("org-mia", { org: "acme" });
    const asOrg = await json(await stack.call("GET", "/v1/users/me", { key: membersKey }), 200);
    expect(asOrg).toMatchObject({ user_id: member.id, organization_id: orgId });

    const removed = await json(await stack.call("DELETE", path(`/members/${member.id}`), { key: admin.key }), 200);
    expect(removed).toEqual({ organization_id: orgId, user_id: member.id, removed: true });
    await json(await stack.call("GET", "/v1/users/me", { key: membersKey }), 401);
    await json(await stack.call("GET", path(), { key: member.key }), 404);
    await json(await stack.call("DELETE", path(`/members/${member.id}`), { key: admin.key }), 404);

    await json(await stack.call("DELETE", path(`/members/${owner.id}`), { key: admin.key }), 403);
    const last = await stack.call("DELETE", path(`/members/${owner.id}`), { key: owner.key });
    expect((await json(last, 409)).code).toBe("last_owner");
    const demote = await stack.call("PATCH", path(`/members/${owner.id}`), { key: owner.key, body: { role: "admin" } });
    expect((await json(demote, 409)).code).toBe("last_owner");
    const promote = { key: admin.key, body: { role: "owner" } };
    await json(await stack.call("PATCH", path(`/members/${admin.id}`), promote), 403);
    const made = await stack.call("PATCH", path(`/members/${admin.id}`), { key: owner.key, body: { role: "owner" } });
    expect(await json(made, 200)).toMatchObject({ user_id: admin.id, role: "owner" });
    const back = await stack.call("PATCH", path(`/members/${admin.id}`), { key: admin.key, body: { role: "member" } });
    expect(await json(back, 200)).toMatchObject({ user_id: admin.id, role: "member" });
    await json(
      await stack.call("PATCH", path(`/members/${admin.id}`), { key: owner.key, body: { role: "boss" } }),
      422,
    );
    // Any member may leave.
    await json(await stack.call("DELETE", path(`/members/${admin.id}`), { key: admin.key }), 200);
    const left = await json(await stack.call("GET", path("/members"), { key: owner.key }), 200);
    expect((left.members as { user_id: string }[]).map((x) => x.user_id)).toEqual([owner.id]);
  });

  it("keeps read-only organization keys to reads", async () => {
    const ro = await json(
      await stack.call("POST", path("/api-keys"), { key: owner.key, body: { name: "viewer", read_only: true } }),
      201,
    );
    const roKey = ro.key as string;
    await json(await stack.call("GET", path(), { key: roKey }), 200);
    const refused = await stack.call("POST", "/v1/sessions/init", { key: roKey, body: { session_id: "org-ro" } });
    expect((await json(refused, 403)).detail).toMatch(/read-only/);
  });
});
