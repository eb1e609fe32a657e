import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyOperations } from "./apply-operations.js";
import { chunkHtml } from "./chunk-html.js";
import { ChunkError, ToolError } from "./errors.js";
import { errorCode } from "./test-support/error-code.js";
import { soupPart } from "./test-support/soup.js";
import type { ChunkRecord } from "./types.js";
import { WorkingDocument } from "./working-document.js";

const BASE_HTML = [
  `<h1 data-chunk-id="h1">Report</h1>`,
  `<p data-chunk-id="p1" class="lead" style="font-size:14px">Alpha paragraph with <b>bold</b> text.</p>`,
  `<table data-chunk-id="t1" style="width:100%"><tr><th colspan="2">Head</th></tr><tr><td rowspan="1">a</td><td style="color:red">b</td></tr></table>`,
  `<h2 data-chunk-id="h2">Details</h2>`,
  `<p data-chunk-id="p2">Beta paragraph mentions the Budget.</p>`,
  `<ul data-chunk-id="l1"><li>one</li><li>two</li></ul>`,
].join("\n");

function base(): ChunkRecord[] {
  return chunkHtml(BASE_HTML).chunks;
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const toolCode = (fn: () => unknown) => errorCode(fn, ToolError);

/** Checks the commit invariant and that untouched chunks are byte-identical to the base. */
function expectConsistent(wd: WorkingDocument, baseChunks: ChunkRecord[]): void {
  expect(applyOperations(baseChunks, wd.operations())).toEqual(wd.chunks());
  const touched = new Set(wd.changedChunkIds());
  const current = new Map(wd.chunks().map((c) => [c.chunkId, c.html]));
  for (const c of baseChunks) {
    if (!touched.has(c.chunkId)) expect(current.get(c.chunkId)).toBe(c.html);
  }
}

describe("WorkingDocument basics", () => {
  it("reads, lists and renders the base unchanged", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    expect(wd.chunks()).toEqual(b);
    expect(wd.toHtml()).toBe(BASE_HTML);
    expect(wd.get("p1").html).toBe(b[1].html);
    expect(wd.has("p1")).toBe(true);
    expect(wd.has("zz")).toBe(false);
    expect(wd.isEmpty()).toBe(false);
    expect(wd.read(["t1", "h1"]).map((c) => c.chunkId)).toEqual(["t1", "h1"]);
    expect(wd.operations()).toEqual([]);
    expect(wd.outline().map((e) => e.level)).toEqual([1, 0, 0, 2, 0, 0]);
    expect(wd.sections().map((s) => s.headingChunkId)).toEqual(["h1", "h2"]);
    expect(wd.sectionSpan("h1")).toEqual(["h1", "p1", "t1", "h2", "p2", "l1"]);
  });

  it("fromHtml chunks and sanitizes", () => {
    const wd = WorkingDocument.fromHtml(`<p onclick="x()">a</p><script>bad()</script><div><p>b</p></div>`);
    expect(wd.chunks().map((c) => c.html.replace(/ data-chunk-id="[^"]*"/, ""))).toEqual(["<p>a</p>", "<p>b</p>"]);
  });

  it("throws ToolError for unknown ids, naming them", () => {
    const wd = new WorkingDocument(base());
    expect(() => wd.get("nope")).toThrow(ToolError);
    expect(() => wd.read(["p1", "missing_1"])).toThrow(/missing_1/);
    expect(toolCode(() => wd.read(["p1", "missing_1"]))).toBe("unknown_chunk");
    expect(toolCode(() => wd.replace("nope", "<p>x</p>", "e"))).toBe("unknown_chunk");
    expect(toolCode(() => wd.insertAfter("nope", "<p>x</p>", "e"))).toBe("unknown_chunk");
    expect(toolCode(() => wd.delete("nope", "e"))).toBe("unknown_chunk");
    expect(toolCode(() => wd.sectionSpan("p1"))).toBe("not_heading");
  });

  it("rejects invalid HTML with ToolError and changes nothing", () => {
    const wd = new WorkingDocument(base());
    const before = wd.toHtml();
    expect(toolCode(() => wd.replace("p1", "<p>a</p><p>b</p>", "e"))).toBe("not_one_block");
    expect(toolCode(() => wd.replace("p1", "<p><b>x</p>", "e"))).toBe("malformed_html");
    expect(toolCode(() => wd.replace("p1", "plain", "e"))).toBe("not_one_block");
    expect(toolCode(() => wd.replace("p1", "", "e"))).toBe("empty");
    expect(toolCode(() => wd.insertAfter("p1", "<script>x</script>", "e"))).toBe("empty");
    expect(toolCode(() => wd.insertAfter("p1", "<div><b>x</div>", "e"))).toBe("malformed_html");
    expect(wd.toHtml()).toBe(before);
    expect(wd.operations()).toEqual([]);
  });

  it("rejects a base with duplicate ids", () => {
    expect(
      () =>
        new WorkingDocument([
          { chunkId: "a", html: "<p>1</p>" },
          { chunkId: "a", html: "<p>2</p>" },
        ]),
    ).toThrow(ChunkError);
  });

  it("searches chunk text with snippets", () => {
    const wd = new WorkingDocument(base());
    expect(wd.search("budget")).toEqual([{ chunkId: "p2", snippet: "Beta paragraph mentions the Budget." }]);
    expect(wd.search("budget", { caseSensitive: true })).toEqual([]);
    expect(wd.search("paragraph").map((h) => h.chunkId)).toEqual(["p1", "p2"]);
    expect(wd.search("paragraph", { limit: 1 }).map((h) => h.chunkId)).toEqual(["p1"]);
    expect(wd.search("a b").map((h) => h.chunkId)).toEqual(["t1"]);
    expect(toolCode(() => wd.search("  "))).toBe("invalid_argument");

    const long = new WorkingDocument(chunkHtml(`<p>${"x".repeat(200)} needle ${"y".repeat(200)}</p>`).chunks);
    const [hit] = long.search("needle");
    expect(hit.snippet).toContain("needle");
    expect(hit.snippet.startsWith("…")).toBe(true);
    expect(hit.snippet.endsWith("…")).toBe(true);
    expect(hit.snippet.length).toBeLessThanOrEqual(82);
  });
});

describe("WorkingDocument edits and net operations", () => {
  it("replace keeps the id, sanitizes, and records a replace", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    const rec = wd.replace("p1", `<p class="lead" onclick="x()">New <em>text</em></p>`, "reword");
    expect(rec).toEqual({ chunkId: "p1", html: `<p data-chunk-id="p1" class="lead">New <em>text</em></p>` });
    expect(wd.operations()).toEqual([{ kind: "replace", chunkId: "p1", html: rec.html, explanation: "reword" }]);
    expectConsistent(wd, b);
  });

  it("replacing with identical HTML records nothing", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    wd.replace("t1", b[2].html, "same");
    wd.replace("t1", b[2].html.replace(` data-chunk-id="t1"`, ""), "same without id");
    expect(wd.operations()).toEqual([]);
    expect(wd.changedChunkIds()).toEqual([]);
  });

  it("edit then edit back to the original is nothing", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    wd.replace("p2", "<p>changed</p>", "one");
    wd.replace("p2", b[4].html, "back");
    expect(wd.operations()).toEqual([]);
  });

  it("insert then edit is one insert with the final HTML and last explanation", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    const [ins] = wd.insertAfter("p1", "<p>draft</p>", "add");
    expect(ins.chunkId).toMatch(/^c_/);
    wd.replace(ins.chunkId, "<p>final</p>", "polish");
    expect(wd.operations()).toEqual([
      {
        kind: "insert",
        chunkId: ins.chunkId,
        afterChunkId: "p1",
        html: `<p data-chunk-id="${ins.chunkId}">final</p>`,
        explanation: "polish",
      },
    ]);
    expectConsistent(wd, b);
  });

  it("insert then delete is nothing", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    const [ins] = wd.insertAfter(null, "<h1>Top</h1>", "add");
    wd.delete(ins.chunkId, "remove");
    expect(wd.operations()).toEqual([]);
    expect(wd.chunks()).toEqual(b);
  });

  it("edit then delete is a delete carrying the delete's explanation", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    wd.replace("p2", "<p>edited</p>", "edit");
    wd.delete("p2", "drop it");
    expect(wd.operations()).toEqual([{ kind: "delete", chunkId: "p2", explanation: "drop it" }]);
    expectConsistent(wd, b);
  });

  it("inserts several blocks in order with fresh ids, never reusing given ids", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    const recs = wd.insertAfter(
      "t1",
      `<div><h3 data-chunk-id="p1">New</h3>loose text<ul><li>x</li></ul></div>`,
      "add section",
    );
    expect(recs).toHaveLength(3);
    const ids = recs.map((r) => r.chunkId);
    for (const id of ids) expect(b.some((c) => c.chunkId === id)).toBe(false);
    expect(wd.chunks().map((c) => c.chunkId)).toEqual(["h1", "p1", "t1", ...ids, "h2", "p2", "l1"]);
    expect(wd.operations().map((o) => (o.kind === "insert" ? o.afterChunkId : null))).toEqual(["t1", ids[0], ids[1]]);
    expectConsistent(wd, b);
  });

  it("anchors inserts on surviving chunks when neighbours are deleted", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    const [a] = wd.insertAfter("h1", "<p>A</p>", "a");
    const [z] = wd.insertAfter(null, "<p>Z</p>", "z");
    wd.delete("h1", "del h1");
    wd.delete("p1", "del p1");
    const [c] = wd.insertAfter("l1", "<p>C</p>", "c");
    wd.delete("l1", "del l1");
    expect(wd.chunks().map((x) => x.chunkId)).toEqual([z.chunkId, a.chunkId, "t1", "h2", "p2", c.chunkId]);
    const ops = wd.operations();
    expect(ops.map((o) => `${o.kind}:${o.chunkId}`)).toEqual([
      `insert:${z.chunkId}`,
      `insert:${a.chunkId}`,
      "delete:h1",
      "delete:p1",
      `insert:${c.chunkId}`,
      "delete:l1",
    ]);
    expect(wd.changedChunkIds()).toEqual([z.chunkId, a.chunkId, "h1", "p1", c.chunkId, "l1"]);
    expectConsistent(wd, b);
  });

  it("can delete everything", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    for (const c of b) wd.delete(c.chunkId, "clear");
    expect(wd.isEmpty()).toBe(true);
    expect(wd.toHtml()).toBe("");
    expectConsistent(wd, b);
  });

  it("keeps untouched chunks byte-identical, including tables and styles", () => {
    const b = base();
    const wd = new WorkingDocument(b);
    wd.replace("p2", "<p>x</p>", "e");
    wd.insertAfter("p1", "<p>y</p>", "e");
    const byId = new Map(wd.chunks().map((c) => [c.chunkId, c.html]));
    expect(byId.get("t1")).toBe(b[2].html);
    expect(byId.get("p1")).toBe(b[1].html);
    expect(wd.toHtml()).toContain(`<td style="color:red">b</td>`);
  });
});

describe("WorkingDocument performance", () => {
  it("edits a 20k-chunk document without re-parsing it per operation", () => {
    const big = chunkHtml(Array.from({ length: 20_000 }, (_, i) => `<p>Paragraph ${i} text</p>`).join("")).chunks;
    const wd = new WorkingDocument(big);
    const start = performance.now();
    for (let i = 0; i < 1000; i++) {
      const target = big[(i * 7919) % big.length].chunkId;
      if (!wd.has(target)) continue;
      if (i % 3 === 0) wd.replace(target, `<p>edited ${i}</p>`, "e");
      else if (i % 3 === 1) wd.insertAfter(target, `<p>new ${i}</p>`, "i");
      else wd.delete(target, "d");
    }
    const elapsed = performance.now() - start;
    expect(wd.search("edited 999").length + wd.outline().length).toBeGreaterThan(0);
    expect(applyOperations(big, wd.operations())).toEqual(wd.chunks());
    // ~100 ms idle; a per-op O(n) parse would take tens of seconds.
    expect(elapsed).toBeLessThan(5000);
  });
});

describe("applyOperations", () => {
  const b = base();

  it("applies ops without mutating its inputs", () => {
    const ops = [{ kind: "delete", chunkId: "p1", explanation: "x" }] as const;
    const copy = structuredClone(b);
    const out = applyOperations(b, [...ops]);
    expect(out.map((c) => c.chunkId)).toEqual(["h1", "t1", "h2", "p2", "l1"]);
    expect(b).toEqual(copy);
  });

  it("throws ChunkError for invalid operations", () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err instanceof ChunkError ? err.code : "other";
      }
      return "no error";
    };
    expect(code(() => applyOperations(b, [{ kind: "delete", chunkId: "zz", explanation: "" }]))).toBe("unknown_chunk");
    expect(
      code(() => applyOperations(b, [{ kind: "replace", chunkId: "zz", html: "<p>x</p>", explanation: "" }])),
    ).toBe("unknown_chunk");
    expect(
      code(() =>
        applyOperations(b, [{ kind: "insert", chunkId: "p1", afterChunkId: null, html: "<p>x</p>", explanation: "" }]),
      ),
    ).toBe("duplicate_chunk");
    expect(
      code(() =>
        applyOperations(b, [{ kind: "insert", chunkId: "n1", afterChunkId: "zz", html: "<p>x</p>", explanation: "" }]),
      ),
    ).toBe("unknown_chunk");
    expect(
      code(() => applyOperations(b, [{ kind: "replace", chunkId: "p1", html: "<p><i>x</p>", explanation: "" }])),
    ).toBe("malformed_html");
    expect(code(() => applyOperations([...b, b[0]], []))).toBe("duplicate_chunk");
  });

  it("forces the op's chunk id onto the stored HTML", () => {
    const out = applyOperations(b, [
      { kind: "replace", chunkId: "p1", html: `<p data-chunk-id="other">x</p>`, explanation: "" },
    ]);
    expect(out[1]).toEqual({ chunkId: "p1", html: `<p data-chunk-id="p1">x</p>` });
  });
});

describe("WorkingDocument property: applyOperations(base, operations()) === chunks()", () => {
  type Step =
    | { kind: "replace"; pick: number; text: string }
    | { kind: "insert"; pick: number; atStart: boolean; blocks: number; text: string }
    | { kind: "delete"; pick: number }
    | { kind: "revert"; pick: number };

  const text = fc.string({ maxLength: 12 });
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), text }),
    fc.record({
      kind: fc.constant("insert" as const),
      pick: fc.nat(),
      atStart: fc.boolean(),
      blocks: fc.integer({ min: 1, max: 3 }),
      text,
    }),
    fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("revert" as const), pick: fc.nat() }),
  );

  it("holds for random edit sequences, leaving untouched chunks byte-identical", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.array(step, { maxLength: 25 }), (baseSize, steps) => {
        const b = base().slice(0, baseSize);
        const baseHtml = new Map(b.map((c) => [c.chunkId, c.html]));
        const wd = new WorkingDocument(b);
        for (const s of steps) {
          const ids = wd.chunks().map((c) => c.chunkId);
          const target = ids.length > 0 ? ids[s.pick % ids.length] : null;
          if (s.kind === "insert") {
            const escaped = escapeText(s.text);
            const blocks = Array.from({ length: s.blocks }, (_, i) => `<p>${escaped} ${i}</p>`).join("");
            wd.insertAfter(s.atStart ? null : target, blocks, `insert ${s.text}`);
          } else if (target === null) {
          } else if (s.kind === "replace") {
            wd.replace(target, `<p class="r">${escapeText(s.text)}</p>`, `replace ${s.text}`);
          } else if (s.kind === "delete") {
            wd.delete(target, "delete");
          } else {
            const original = baseHtml.get(target);
            if (original !== undefined) wd.replace(target, original, "revert");
          }
        }
        const ops = wd.operations();
        expect(applyOperations(b, ops)).toEqual(wd.chunks());
        // Net ops touch each chunk at most once and never mention inserted-then-deleted chunks.
        expect(new Set(ops.map((o) => o.chunkId)).size).toBe(ops.length);
        for (const o of ops) {
          if (o.kind === "insert") expect(baseHtml.has(o.chunkId)).toBe(false);
          if (o.kind === "replace") expect(o.html).not.toBe(baseHtml.get(o.chunkId));
        }
        const touched = new Set(ops.map((o) => o.chunkId));
        for (const c of wd.chunks()) if (!touched.has(c.chunkId)) expect(c.html).toBe(baseHtml.get(c.chunkId));
        // The committed document re-chunks to itself.
        expect(chunkHtml(wd.toHtml()).chunks).toEqual(wd.chunks());
      }),
      { numRuns: 200 },
    );
  });
});

describe("WorkingDocument property: arbitrary HTML from the agent", () => {
  it("either applies an edit or throws ToolError leaving the document unchanged; the invariant always holds", () => {
    const edit = fc.record({
      kind: fc.constantFrom("replace" as const, "insert" as const, "delete" as const),
      pick: fc.nat(),
      html: fc.array(soupPart, { maxLength: 12 }).map((parts) => parts.join("")),
    });
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 15 }), (edits) => {
        const b = base();
        const wd = new WorkingDocument(b);
        for (const e of edits) {
          const ids = wd.chunks().map((c) => c.chunkId);
          const target = ids.length > 0 ? ids[e.pick % ids.length] : null;
          const before = wd.toHtml();
          const opsBefore = wd.operations();
          try {
            if (e.kind === "insert") wd.insertAfter(target, e.html, "fuzz");
            else if (target !== null && e.kind === "replace") wd.replace(target, e.html, "fuzz");
            else if (target !== null) wd.delete(target, "fuzz");
          } catch (err) {
            expect(err).toBeInstanceOf(ToolError);
            expect(wd.toHtml()).toBe(before);
            expect(wd.operations()).toEqual(opsBefore);
          }
        }
        expect(applyOperations(b, wd.operations())).toEqual(wd.chunks());
        expect(chunkHtml(wd.toHtml()).chunks).toEqual(wd.chunks());
      }),
      { numRuns: 300 },
    );
  });
});
