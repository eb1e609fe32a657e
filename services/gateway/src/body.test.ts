// inspectJson: the checks every parsed JSON body gets before validation.
import { describe, expect, it } from "vitest";
import { inspectJson, MAX_JSON_DEPTH } from "./body.js";

describe("inspectJson", () => {
  it("accepts ordinary bodies and surrogate pairs", () => {
    expect(inspectJson({ message: "hi 😀", list: [1, "a", { b: null }] })).toBeNull();
  });

  it("refuses nesting past MAX_JSON_DEPTH with the place it happened", () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH + 1; i++) deep = [deep];
    const issue = inspectJson({ a: deep });
    expect(issue?.type).toBe("json_too_deep");
    expect(issue?.loc.slice(0, 3)).toEqual(["body", "a", 0]);
    let ok: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) ok = [ok];
    expect(inspectJson(ok)).toBeNull();
  });

  it("names the field holding a lone surrogate, in values and keys", () => {
    expect(inspectJson({ options: { filename: "a\ud800" } })).toMatchObject({
      type: "string_unicode",
      loc: ["body", "options", "filename"],
    });
    expect(inspectJson({ list: ["ok", "\udfff"] })?.loc).toEqual(["body", "list", 1]);
    expect(inspectJson({ "k\ud800": 1 })?.loc).toEqual(["body", "k\ud800"]);
  });

  it("removes NUL from nested strings in place", () => {
    const body = { a: "x\0y", b: ["\0z"], c: { d: "\0" } };
    expect(inspectJson(body)).toBeNull();
    expect(body).toEqual({ a: "xy", b: ["z"], c: { d: "" } });
  });

  it("walks a million-element array quickly", () => {
    const big = Array.from({ length: 1_000_000 }, (_, i) => i);
    const started = performance.now();
    expect(inspectJson({ big })).toBeNull();
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
