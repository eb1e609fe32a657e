// TRUST_PROXY (docs/configuration.md): behind a proxy the gateway takes the client's address from
// X-Forwarded-For as the trusted proxy reports it, so per-source limits (agent sign-ups,
// AGENT_SIGNUPS_PER_HOUR) count each client, not the proxy that every request comes through.
// Here the proxy is the test itself on loopback (TRUST_PROXY=loopback); agent-takeover.test.ts
// checks that without it a client's own X-Forwarded-For changes nothing.
import { DEFAULT_AGENT_SIGNUPS_PER_HOUR } from "@redline/billing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "trusted_proxy", trustProxy: "loopback" });
});
afterAll(async () => {
  await stack?.close();
});

/** An agent sign-up that the proxy says came from `client` (and, before it, `claimed`). */
const signUpFrom = (client: string, claimed?: string) =>
  stack.call("POST", "/v1/agents/signup", {
    body: {},
    headers: { "X-Forwarded-For": claimed ? `${claimed}, ${client}` : client },
  });

describe("behind a trusted proxy", () => {
  it("limits sign-ups per client address, not per proxy", async () => {
    for (let i = 0; i < DEFAULT_AGENT_SIGNUPS_PER_HOUR; i++)
      expect((await signUpFrom("198.51.100.1")).status).toBe(201);
    const limited = await signUpFrom("198.51.100.1");
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { code: string }).code).toBe("signup_limit");

    // Another client through the same proxy still has its sign-ups.
    expect((await signUpFrom("198.51.100.2")).status).toBe(201);
  });

  it("takes the address the trusted proxy saw, not one the client wrote before it", async () => {
    // The client claims to be a fresh address; the proxy appends the one it saw, which is limited.
    const res = await signUpFrom("198.51.100.1", "192.0.2.250");
    expect(res.status).toBe(429);
  });
});
