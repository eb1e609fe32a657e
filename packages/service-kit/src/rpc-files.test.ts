// bindRpcFiles: one file per RPC, found by the method's name; a missing file or export stops
// the service at start with a message naming it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { bindRpcFiles, type CallContext, rpcFileName, type ServiceDef } from "./rpc.js";

const dir = mkdtempSync(join(tmpdir(), "rpc-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rpcDir = pathToFileURL(`${dir}/`);
writeFileSync(
  join(dir, "list-versions.js"),
  "export const listVersions = async (ctx, req) => ({ n: ctx.base + req.n });\n",
);
writeFileSync(join(dir, "get-version.js"), "export const somethingElse = 1;\n");

/** A definition with the given method names (bindRpcFiles reads only the names). */
const definition = (...names: string[]) => Object.fromEntries(names.map((n) => [n, {}])) as unknown as ServiceDef;

describe("bindRpcFiles", () => {
  it("names files after methods", () => {
    expect(rpcFileName("listVersions")).toBe("list-versions");
    expect(rpcFileName("chat")).toBe("chat");
    expect(rpcFileName("reEditChunk")).toBe("re-edit-chunk");
  });

  it("binds each method to its file's export and hands it the context", async () => {
    const [binding] = await bindRpcFiles({ base: 40 }, rpcDir, [definition("listVersions")]);
    const handler = binding?.handlers.listVersions as (req: unknown, call: CallContext) => Promise<unknown>;
    expect(await handler({ n: 2 }, {} as CallContext)).toEqual({ n: 42 });
  });

  it("refuses to start when a method has no file, or its file exports no such function", async () => {
    await expect(bindRpcFiles({}, rpcDir, [definition("deleteVersion")])).rejects.toThrow(
      /RPC deleteVersion: cannot load .*delete-version\.js/,
    );
    await expect(bindRpcFiles({}, rpcDir, [definition("getVersion")])).rejects.toThrow(
      /RPC getVersion: .*get-version\.js exports no function getVersion/,
    );
  });
});
