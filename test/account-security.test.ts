// Issue #30's findings replayed on the real stack, each attack as the outside test played it and
// each refused: a stranger who types the CEO's address gains nothing from an admin's invitation;
// inviting tells nobody whether an address has an account; members show only what they chose to
// share; keys and self-service organizations are capped per account; a new organization brings
// no free operations; a "once per account" promotion is once per person across the
// organizations they created; another tenant's progress stream reveals nothing. (The takeover
// findings are in agent-takeover.test.ts, the rate limits in account-limits.test.ts.)
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { readSse } from "./support/jobs.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "account_security", authCacheTtlMs: 0 });
});
afterAll(async () => {
  await stack?.close();
});

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

async function userId(key: string): Promise<string> {
  return (await json(await stack.call("GET", "/v1/users/me", { key }), 200)).user_id as string;
}

/** An organization created over HTTP by `key`'s user; its id. */
async function organization(key: string, name: string): Promise<string> {
  return (await json(await stack.call("POST", "/v1/organizations", { key, body: { name } }), 201)).id as string;
}

describe("a stranger who sets someone else's email (high)", () => {
  it("cannot take the admin invitation meant for that address, nor reach the organization", async () => {
    const ceo = await stack.createKey("acme-founder");
    const orgId = await organization(ceo, "acme-sec");
    const stranger = await stack.createKey("sec-stranger");
    // The attack: type the victim's address, unverified.
    const typed = await json(
      await stack.call("PATCH", "/v1/users/me", { key: stranger, body: { email: "ceo@acme.test" } }),
      200,
    );
    expect(typed).toMatchObject({ email: "ceo@acme.test" });
    expect(typed).not.toHaveProperty("email_verified_at");
    const invited = await json(
      await stack.call("POST", `/v1/organizations/${orgId}/members`, {
        key: ceo,
        body: { email: "ceo@acme.test", role: "admin" },
      }),
      201,
    );
    expect(invited).toMatchObject({ status: "pending", role: "admin" });

    // Nothing joined, nothing to accept, nothing to read or mint.
    expect((await json(await stack.call("GET", "/v1/invitations", { key: stranger }), 200)).invitations).toEqual([]);
    await json(await stack.call("POST", `/v1/invitations/${invited.id}/accept`, { key: stranger }), 404);
    await json(await stack.call("GET", `/v1/organizations/${orgId}`, { key: stranger }), 404);
    await json(await stack.call("POST", `/v1/organizations/${orgId}/api-keys`, { key: stranger, body: {} }), 404);
    const members = await json(await stack.call("GET", `/v1/organizations/${orgId}/members`, { key: ceo }), 200);
    expect((members.members as unknown[]).length).toBe(1);

    // The address's real owner, once verified, gets it.
    const owner = await stack.createKey("sec-real-ceo");
    await stack.verifyEmail(owner, "ceo@acme.test");
    const mine = await json(await stack.call("GET", "/v1/invitations", { key: owner }), 200);
    expect((mine.invitations as { id: string }[]).map((i) => i.id)).toEqual([invited.id]);
    const joined = await json(await stack.call("POST", `/v1/invitations/${invited.id}/accept`, { key: owner }), 200);
    expect(joined).toMatchObject({ organization: { id: orgId, role: "admin" } });
  });

  it("loses a verification by changing the address: only the new one's code verifies it", async () => {
    const key = await stack.createKey("sec-changer");
    await stack.verifyEmail(key, "first@sec.test");
    const changed = await json(
      await stack.call("PATCH", "/v1/users/me", { key, body: { email: "second@sec.test" } }),
      200,
    );
    expect(changed).toEqual({ user_id: expect.any(String), email: "second@sec.test" });
    const wrong = await json(
      await stack.call("POST", "/v1/users/me/email/verify", { key, body: { code: "00000000" } }),
      403,
    );
    expect(wrong.detail).toMatch(/attempts? left/);
  });
});

describe("inviting by email (low)", () => {
  it("answers alike whether or not the address has an account, and adds nobody", async () => {
    const admin = await stack.createKey("sec-inviter");
    const orgId = await organization(admin, "uniform-sec");
    const known = await stack.createKey("sec-known");
    await stack.verifyEmail(known, "known@sec.test");
    const answers = [];
    for (const email of ["known@sec.test", "ghost@sec.test"]) {
      const res = await stack.call("POST", `/v1/organizations/${orgId}/members`, { key: admin, body: { email } });
      answers.push({ status: res.status, body: (await res.json()) as Record<string, unknown> });
    }
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    expect(Object.keys(answers[0].body).sort()).toEqual(Object.keys(answers[1].body).sort());
    const strip = (b: Record<string, unknown>) => ({ ...b, id: 0, email: 0, created_at: 0, expires_at: 0 });
    expect(strip(answers[0].body)).toEqual(strip(answers[1].body));
    const members = await json(await stack.call("GET", `/v1/organizations/${orgId}/members`, { key: admin }), 200);
    expect((members.members as { user_id: string }[]).map((m) => m.user_id)).toEqual([await userId(admin)]);
  });

  it("shows a member's email only after the member chose to share it", async () => {
    const admin = await stack.createKey("sec-sharer-admin");
    const orgId = await organization(admin, "share-sec");
    const member = await stack.createKey("sec-sharer");
    await stack.verifyEmail(member, "private@sec.test");
    const memberId = await userId(member);
    const invitation = await json(
      await stack.call("POST", `/v1/organizations/${orgId}/members`, { key: admin, body: { user_id: memberId } }),
      201,
    );
    await json(await stack.call("POST", `/v1/invitations/${invitation.id}/accept`, { key: member }), 200);
    const listed = async () =>
      (
        (await json(await stack.call("GET", `/v1/organizations/${orgId}/members`, { key: admin }), 200)).members as {
          user_id: string;
          email?: string;
        }[]
      ).find((m) => m.user_id === memberId);
    expect(await listed()).not.toHaveProperty("email");
    // The admin cannot share it for them.
    const path = `/v1/organizations/${orgId}/members/${memberId}`;
    await json(await stack.call("PATCH", path, { key: admin, body: { share_email: true } }), 403);
    await json(await stack.call("PATCH", path, { key: member, body: { share_email: true } }), 200);
    expect((await listed())?.email).toBe("private@sec.test");
  });
});

describe("keys per account (medium)", () => {
  it("caps live keys at 25 even when 40 are asked for at once: the rest are 409 key_limit", async () => {
    const key = await stack.createKey("sec-key-hoarder");
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        stack.call("POST", "/v1/api-keys", { key, body: { name: `k${i}` } }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as Record<string, unknown>,
        })),
      ),
    );
    expect(statuses.filter((s) => s.status === 201)).toHaveLength(24);
    const refused = statuses.filter((s) => s.status === 409);
    expect(refused).toHaveLength(16);
    expect(refused[0].body).toMatchObject({ code: "key_limit" });
    const listed = await json(await stack.call("GET", "/v1/api-keys", { key }), 200);
    expect(listed.api_keys).toHaveLength(25);
  });
});

describe("self-service organizations (medium)", () => {
  it("are capped at 3 per user, start without free operations, and share one promotion per person", async () => {
    const founder = await stack.createKey("sec-multiplier");
    const orgs = [];
    for (const name of ["multi-1", "multi-2", "multi-3"]) orgs.push(await organization(founder, name));
    const fourth = await json(
      await stack.call("POST", "/v1/organizations", { key: founder, body: { name: "multi-4" } }),
      409,
    );
    expect(fourth.code).toBe("organization_limit");

    // Each new organization's usage: no free operations.
    const orgKeys = [];
    for (const orgId of orgs) {
      const created = await json(
        await stack.call("POST", `/v1/organizations/${orgId}/api-keys`, { key: founder, body: {} }),
        201,
      );
      orgKeys.push(created.key as string);
    }
    const usage = await json(await stack.call("GET", "/v1/usage", { key: orgKeys[0] }), 200);
    expect(usage).toMatchObject({ monthly_limit: 0 });

    // One "once per account" promotion: redeemed for the person once, across their organizations.
    const promo = await stack.billing.createPromotion({
      name: "Launch",
      ops: 50,
      expiresAt: new Date(Date.now() + 86_400_000),
      maxRedemptions: 0,
    });
    const redeem = (key: string) => stack.call("POST", "/v1/promotions/redeem", { key, body: { code: promo.code } });
    await json(await redeem(orgKeys[0]), 200);
    for (const key of [orgKeys[1], orgKeys[2], founder]) {
      expect((await json(await redeem(key), 409)).code).toBe("already_redeemed_by_person");
    }
  });
});

describe("another tenant's progress stream (low)", () => {
  it("answers 200 with one event: error naming no job detail, as for an unknown job", async () => {
    const alice = await stack.createKey("sec-stream-alice");
    const job = await json(
      await stack.call("POST", "/v1/chat/async", {
        key: alice,
        body: { message: 'replace "Alpha" with "Beta"', document_html: "<p>Alpha secret plan.</p>" },
      }),
      202,
    );
    const mallory = await stack.createKey("sec-stream-mallory");
    const read = await readSse(stack, `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`, {
      headers: { Authorization: `Bearer ${mallory}` },
      stopAfter: (e) => e.event === "error",
    });
    expect(read.status).toBe(200);
    expect(read.events.map((e) => e.event)).toEqual(["error"]);
    expect(JSON.stringify(read.events)).not.toMatch(/secret|Alpha|Beta/);
  });
});
