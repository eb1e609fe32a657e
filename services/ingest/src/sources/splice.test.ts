import { readdirSync } from "node:fs";
import { chunkHtml } from "@redline/html-chunks";
import { diffLines } from "diff";
import { describe, expect, it } from "vitest";
import { convertInProcess } from "../convert-in-process.js";
import { buildExport, type ExportBuildTask } from "../export/export-worker.js";
import { DEFAULT_LIMITS, type DocumentFormat } from "../formats.js";
import { corpusDir, readCorpus } from "../testing/corpus.js";
import type { DocumentSource } from "./types.js";

const layout = {
  widthIn: 8.5,
  heightIn: 11,
  orientation: "portrait" as const,
  margins: { top: 1, right: 1, bottom: 1, left: 1 },
  paperName: "Letter" as const,
};

/** Converts as an upload with keep_source does and stores as the documents service does. */
async function load(name: string, format: DocumentFormat) {
  const bytes = readCorpus(name);
  const converted = await convertInProcess(format, name, bytes, DEFAULT_LIMITS, { keepSource: true });
  const source = converted.source;
  if (!source) throw new Error(`${name}: no source map`);
  const stored = chunkHtml(converted.html, { parts: "drop" }).chunks;
  const loaded = Object.fromEntries(stored.map((c) => [c.chunkId, c.html]));
  const doc: DocumentSource = { format: source.map.format, bytes, map: source.map, loaded };
  return { bytes, stored, doc, converted };
}

async function exportAs(format: "markdown" | "txt", html: string, source?: DocumentSource) {
  const task: ExportBuildTask = {
    kind: "export-build",
    html,
    sanitized: false,
    maxElements: DEFAULT_LIMITS.maxElements,
    format,
    title: "t",
    layout,
    embedImages: false,
    images: [],
    source,
  };
  const built = await buildExport(task);
  if (built.kind !== "file") throw new Error("not a file");
  return Buffer.from(built.bytes);
}

/** Lines added or removed between two texts. */
function changedLines(a: string, b: string): string[] {
  return diffLines(a, b)
    .filter((p) => p.added || p.removed)
    .flatMap((p) => p.value.split(/\r?\n/).filter((l) => l.trim() !== ""));
}

const cases: [string, DocumentFormat, "markdown" | "txt"][] = [
  ...readdirSync(`${corpusDir}/md`).map((f) => [`md/${f}`, "md", "markdown"] as [string, DocumentFormat, "markdown"]),
  ...readdirSync(`${corpusDir}/txt`).map((f) => [`txt/${f}`, "txt", "txt"] as [string, DocumentFormat, "txt"]),
];

describe("in-place markdown and text export", () => {
  it.each(cases)("%s: an untouched export is the original, byte for byte", async (name, format, exportFormat) => {
    const { bytes, stored, doc } = await load(name, format);
    expect(Object.keys(doc.map.chunks).length).toBe(stored.length);
    const out = await exportAs(exportFormat, stored.map((c) => c.html).join("\n"), doc);
    expect(out.equals(bytes)).toBe(true);
  });

  it.each(cases)("%s: editing one block changes only that block", async (name, format, exportFormat) => {
    const { bytes, stored, doc } = await load(name, format);
    const target = stored.findIndex((c, i) => i > 0 && c.html.startsWith(`<p data-chunk-id="${c.chunkId}">`));
    const index = target >= 0 ? target : 0;
    const chunk = stored[index];
    const edited = chunk.html.replace(/^(<[a-z0-9]+[^>]*>)/, "$1EDITED ");
    const html = stored.map((c, i) => (i === index ? edited : c.html)).join("\n");
    const out = await exportAs(exportFormat, html, doc);
    const encoding = format === "txt" && name.includes("1252") ? "latin1" : "utf8";
    const changed = changedLines(bytes.toString(encoding), out.toString(encoding));
    expect(changed.some((l) => l.includes("EDITED"))).toBe(true);
    // Only the edited block's lines differ: every changed line is in the block's original bytes or the new text.
    const span = doc.map.chunks[chunk.chunkId];
    if (span.kind !== "bytes") throw new Error("bytes span expected");
    const original = bytes.subarray(span.start, span.end).toString(encoding);
    for (const line of changed) expect(line.includes("EDITED") || original.includes(line.trim())).toBe(true);
  });

  it("deletes and inserts at their positions; without a source the export is generated", async () => {
    const { stored, doc, bytes } = await load("md/tika-testMARKDOWN.md", "md");
    const kept = stored.filter((_, i) => i !== 1);
    const html = [
      ...kept.slice(0, 2).map((c) => c.html),
      "<p>A new paragraph.</p>",
      ...kept.slice(2).map((c) => c.html),
    ].join("\n");
    const out = (await exportAs("markdown", html, doc)).toString("utf8");
    expect(out).toContain("A new paragraph.");
    const removedSpan = doc.map.chunks[stored[1].chunkId];
    if (removedSpan.kind !== "bytes") throw new Error("bytes span expected");
    expect(out).not.toContain(bytes.subarray(removedSpan.start, removedSpan.end).toString("utf8"));
    const generated = await exportAs("markdown", stored.map((c) => c.html).join("\n"));
    expect(generated.equals(bytes)).toBe(false);
  });

  it("keeps CRLF line endings for edited blocks of a CRLF file", async () => {
    const { stored, doc } = await load("txt/snappy-alice29.txt", "txt");
    const index = stored.findIndex((c) => c.html.includes("<br>"));
    const html = stored.map((c, i) => (i === index ? "<p>one<br>two</p>" : c.html)).join("\n");
    const out = (await exportAs("txt", html, doc)).toString("utf8");
    expect(out).toContain("one\r\ntwo");
    expect(out.replace(/\r\n/g, "")).not.toContain("\n");
  });
});
