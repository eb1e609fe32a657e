import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports the chunk model", () => {
    const exported: Record<string, unknown> = { ...api };
    for (const name of [
      "sanitizeHtml",
      "mintChunkId",
      "chunkHtml",
      "validateChunkHtml",
      "parseChunk",
      "outline",
      "sections",
      "sectionSpan",
      "countSections",
      "textOf",
      "applyOperations",
      "addTableRow",
      "wrapPhrase",
      "replaceText",
    ] as const) {
      expect(typeof exported[name]).toBe("function");
    }
    expect(new api.ChunkError("empty", "m")).toBeInstanceOf(Error);
    expect(new api.ToolError("unknown_chunk", "m").code).toBe("unknown_chunk");
  });

  it("round-trips a document through load, agent edits and commit", () => {
    const stored = api.chunkHtml(`<h1>Plan</h1><p>Ship in <b>May</b>.</p><table><tr><td>Q2</td></tr></table>`);
    const wd = new api.WorkingDocument(stored.chunks);
    const [h1, p, table] = stored.chunks;
    const edited = api.replaceText(wd.get(p.chunkId).html, "May", "June");
    wd.replace(p.chunkId, edited.html, "move date");
    wd.replace(table.chunkId, api.addTableRow(table.html, ["Q3"]), "add quarter");
    wd.insertAfter(h1.chunkId, "<p>Summary first.</p>", "add summary");
    const committed = api.WorkingDocument.applyOperations(stored.chunks, wd.operations());
    expect(committed).toEqual(wd.chunks());
    expect(api.textOf(wd.toHtml())).toBe("Plan Summary first. Ship in June. Q2 Q3");
    expect(wd.toHtml()).toContain("<b>June</b>");
  });
});
