// CORS over real HTTP: a browser on another origin gets its preflight answered without a key,
// and can read every answer, refusals included (the browser review client needs both).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayConfig } from "./config.js";
import { type RunningGateway, startGateway } from "./service.js";

const CLOSED = "127.0.0.1:1";
const addrs = { documents: CLOSED, sessions: CLOSED, agent: CLOSED, billing: CLOSED, ingest: CLOSED };
const ORIGIN = "http://127.0.0.1:5173";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", maxRequestMb: 0.001 }));
});
afterAll(async () => {
  await gw?.close();
});

function preflight(path: string, method: string, headers: string) {
  return fetch(`${gw.url}${path}`, {
    method: "OPTIONS",
    headers: { Origin: ORIGIN, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers },
  });
}

describe("CORS", () => {
  it("answers a preflight with 204 before auth, allowing the methods and headers clients send", async () => {
    const res = await preflight("/v1/chat/async", "POST", "authorization,content-type");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")?.split(", ")).toEqual(["GET", "POST", "PATCH", "DELETE"]);
    const allowed = res.headers.get("access-control-allow-headers")?.toLowerCase().split(", ") ?? [];
    for (const h of ["authorization", "content-type", "last-event-id"]) expect(allowed).toContain(h);
    expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    // The key is never a cookie, so credentials are not allowed (and "*" could not carry them).
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(await res.text()).toBe("");
  });

  it("lets a browser read refusals: 401 without a key and 413 over the cap carry the headers", async () => {
    const unauthorized = await fetch(`${gw.url}/v1/sessions`, { headers: { Origin: ORIGIN } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe("*");
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("X-Usage-Remaining");
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("Retry-After");

    const tooLarge = await fetch(`${gw.url}/v1/chat`, {
      method: "POST",
      headers: { Origin: ORIGIN, "Content-Type": "application/json", Authorization: "Bearer sk_x" },
      body: JSON.stringify({ message: "x".repeat(4096) }),
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("leaves an OPTIONS that is not a preflight to routing (404 JSON)", async () => {
    const res = await fetch(`${gw.url}/v1/sessions`, { method: "OPTIONS" });
    expect(res.status).toBe(404);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await res.json()) as { detail: string }).detail).toEqual(expect.any(String));
  });
});
