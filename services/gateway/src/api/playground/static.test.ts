// GET /playground over real HTTP on a gateway whose backends are all closed (the page needs
// none): a built tree is served with the CSP and caching rules, a missing build is a 503 page
// naming `pnpm codegen`, and nothing outside the tree (dot files, traversal) is reachable.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayConfig } from "../../config.js";
import { type RunningGateway, startGateway } from "../../service.js";
import { PLAYGROUND_CSP } from "./static.js";

const CLOSED = "127.0.0.1:1";
const addrs = { documents: CLOSED, sessions: CLOSED, agent: CLOSED, billing: CLOSED, ingest: CLOSED };

let root: string;
let built: RunningGateway;
let unbuilt: RunningGateway;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "redline-playground-"));
  const dist = join(root, "dist");
  mkdirSync(join(dist, "assets"), { recursive: true });
  writeFileSync(join(dist, "index.html"), "<!doctype html><title>pg</title>");
  writeFileSync(join(dist, "assets", "index-abc123.js"), "console.log(1);");
  writeFileSync(join(dist, ".build-stamp.json"), "{}");
  writeFileSync(join(root, "secret.txt"), "outside the tree");
  const cfg = { port: 0, addrs, logLevel: "silent" };
  built = await startGateway(gatewayConfig({ ...cfg, playgroundDir: dist }));
  unbuilt = await startGateway(gatewayConfig({ ...cfg, playgroundDir: join(root, "absent") }));
});
afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("playground static files", () => {
  it("serves index.html at /playground and /playground/ without a key, not cached, with the CSP", async () => {
    for (const path of ["/playground", "/playground/", "/playground/index.html"]) {
      const res = await fetch(`${built.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain("<title>pg</title>");
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toBe(PLAYGROUND_CSP);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect(PLAYGROUND_CSP).toContain("frame-ancestors 'none'");
    expect(PLAYGROUND_CSP).not.toContain("unsafe");
  });

  it("caches hashed assets for a year and answers HEAD without a body", async () => {
    const res = await fetch(`${built.url}/playground/assets/index-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await res.text()).toBe("console.log(1);");
    const head = await fetch(`${built.url}/playground/assets/index-abc123.js`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("15");
  });

  it("reaches nothing outside the tree: dot files, traversal and unknown types are 404", async () => {
    for (const path of [
      "/playground/.build-stamp.json",
      "/playground/%2e%2e/secret.txt",
      "/playground/..%2fsecret.txt",
      "/playground/assets/missing.js",
      "/playground/assets",
      "/playground/index.exe",
    ]) {
      const res = await fetch(`${built.url}${path}`);
      expect([400, 404], path).toContain(res.status);
      expect(await res.text()).not.toContain("outside the tree");
    }
    // Other methods are not the playground's: the API's JSON 404.
    const post = await fetch(`${built.url}/playground`, { method: "POST" });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { detail: string }).detail).toContain("no route");
  });

  it("answers 503 with a page saying to run pnpm codegen when the playground is not built", async () => {
    const res = await fetch(`${unbuilt.url}/playground`);
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toBe(PLAYGROUND_CSP);
    expect(await res.text()).toContain("pnpm codegen");
  });
});
