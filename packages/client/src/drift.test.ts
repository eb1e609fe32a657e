// The committed client files (src/gen/openapi.json and schema.ts) are what the gateway's route
// registry generates today: a route or schema changed without `pnpm codegen` fails here.
// (test/client.test.ts checks the same file against what a running gateway serves.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GEN_DIR, generateClientFiles } from "../scripts/generate.js";

describe("generated client files", () => {
  it("match what the gateway's OpenAPI document generates (run pnpm codegen when this fails)", async () => {
    const fresh = await generateClientFiles();
    for (const [name, text] of Object.entries(fresh)) {
      const committed = readFileSync(join(GEN_DIR, name), "utf8");
      // One boolean per file first, so a drift reports the file's name rather than a 500 kB diff.
      expect({ file: name, upToDate: committed === text }).toEqual({ file: name, upToDate: true });
    }
    const doc = JSON.parse(fresh["openapi.json"]) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/chat", "/v1/chat/{session_id}/stream"]));
    expect(fresh["schema.ts"]).toContain("export interface paths");
  }, 60_000);
});
