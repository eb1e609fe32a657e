// GET /v1/sessions pages with offset, most recent activity first; a limit over the maximum is
// clamped (the spec sets no bound), while 0, negatives and non-integers are refused with 422.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Body, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "session_list" }, "lena"));
  for (const id of ["s-1", "s-2", "s-3"]) {
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, { session_id: id });
    expect(init.status).toBe(200);
  }
});
afterAll(async () => {
  await stack?.close();
});

const ids = (body: Body) => body.sessions.map((s: Body) => s.session_id);

describe("GET /v1/sessions", () => {
  it("pages with limit and offset, most recent first", async () => {
    const first = await jsonCall(stack, "GET", "/v1/sessions?limit=2", key);
    expect(first.status).toBe(200);
    expect(ids(first.body)).toEqual(["s-3", "s-2"]);
    const rest = await jsonCall(stack, "GET", "/v1/sessions?limit=2&offset=2", key);
    expect(ids(rest.body)).toEqual(["s-1"]);
    const past = await jsonCall(stack, "GET", "/v1/sessions?offset=10", key);
    expect(ids(past.body)).toEqual([]);
  });

  it("clamps a limit over 200 and refuses a malformed one", async () => {
    const big = await jsonCall(stack, "GET", "/v1/sessions?limit=100000", key);
    expect(big.status).toBe(200);
    expect(ids(big.body)).toEqual(["s-3", "s-2", "s-1"]);
    for (const q of ["limit=0", "limit=-1", "offset=-1", "limit=abc", "offset=1.5"]) {
      const bad = await jsonCall(stack, "GET", `/v1/sessions?${q}`, key);
      expect(bad.status, q).toBe(422);
      expect(Array.isArray(bad.body.detail), q).toBe(true);
    }
  });
});
