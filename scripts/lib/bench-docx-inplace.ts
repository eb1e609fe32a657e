// (r) Word files edited in place, for `pnpm bench`: on each corpus .docx, load it, make one edit
// (a word added to one paragraph), write it back in place, and report the share of untouched
// paragraphs that come back byte-identical (target 100 %), beside the time of that export, of the
// generated export (docx@9 from HTML) and of pandoc's html → docx on the same HTML.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunkHtml } from "@redline/html-chunks";
import {
  convertDocx,
  DEFAULT_LIMITS,
  documentBlocks,
  htmlToDocx,
  resolveLayout,
  writeDocxInPlace,
} from "@redline/ingest";
import { readCorpus } from "../../test/fixtures/corpus.js";
import type { BenchResult } from "./bench-ingest.js";

const DOCX = [
  "docx/tika-testWORD_various.docx",
  "docx/poi-IllustrativeCases-budget-tables.docx",
  "docx/tika-testWORD_2006ml.docx",
  "docx/pydocx-comments-rich-para.docx",
  "docx/poi-bug59058-seer-cancer-stats.docx",
  "docx/poi-bug65649-large-procurement-tables.docx",
];
const REPEATS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function medianMs(run: () => Promise<unknown> | unknown): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  return median(ms);
}

function hasPandoc(): boolean {
  try {
    execFileSync("sh", ["-c", "command -v pandoc"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const paragraphs = (xml: string) => (xml.match(/<w:p[\s>/]/g) ?? []).length;

/** Runs (r) and appends its lines to `results`. */
export async function benchDocxInPlace(results: BenchResult[]): Promise<void> {
  const pandoc = hasPandoc();
  const dir = mkdtempSync(join(tmpdir(), "redline-bench-r-"));
  let untouched = 0;
  let identical = 0;
  const lines: string[] = [];
  try {
    for (const name of DOCX) {
      const bytes = readCorpus(name);
      const converted = await convertDocx(bytes, name, DEFAULT_LIMITS, { keepSource: true });
      const map = converted.source?.map;
      if (!map) continue;
      const { chunks } = chunkHtml(converted.html);
      const loaded = Object.fromEntries(chunks.map((c) => [c.chunkId, c.html]));
      const target = chunks.find((c) => map.chunks[c.chunkId] && /^<p\b[^>]*>[^<]*\p{L}{3}/u.test(c.html));
      if (!target) continue;
      const html = chunks
        .map((c) => (c === target ? c.html.replace(/>([^<]*?)(\p{L}{3,})/u, ">$1revised $2") : c.html))
        .join("\n");
      const source = { format: "docx" as const, bytes, map, loaded };
      const written = await writeDocxInPlace(html, source);
      const before = await documentBlocks(bytes);
      const after = await documentBlocks(written.bytes);
      const span = map.chunks[target.chunkId];
      const edited = span.kind === "block" ? span.index : -1;
      before.forEach((block, i) => {
        if (i === edited) return;
        untouched += paragraphs(block);
        if (after[i] === block) identical += paragraphs(block);
      });
      const inPlaceMs = await medianMs(() => writeDocxInPlace(html, source));
      const layout = resolveLayout({}, converted.pageSetup);
      const generatedMs = await medianMs(() => htmlToDocx({ html, title: name, layout, images: new Map() }));
      let pandocMs: number | null = null;
      if (pandoc) {
        const input = join(dir, "in.html");
        writeFileSync(input, html);
        pandocMs = await medianMs(() =>
          execFileSync("pandoc", ["-f", "html", "-t", "docx", "-o", join(dir, "out.docx"), input], { stdio: "ignore" }),
        );
      }
      const short = name.replace(/^docx\//, "");
      lines.push(
        `${short}: in place ${inPlaceMs.toFixed(0)} ms, generated ${generatedMs.toFixed(0)} ms` +
          (pandocMs === null
            ? ""
            : `, pandoc ${pandocMs.toFixed(0)} ms (in place ${(inPlaceMs / pandocMs).toFixed(2)}x)`),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const share = untouched === 0 ? 0 : (identical / untouched) * 100;
  results.push({
    name: "(r) docx edit in place: untouched paragraphs byte-identical after one edit",
    value: `${share.toFixed(2)} % (${identical}/${untouched} paragraphs over ${lines.length} files)`,
    target: "100 %",
    pass: untouched > 0 && identical === untouched,
  });
  results.push({
    name: `(r) docx export time, in place vs generated${pandoc ? " vs pandoc html → docx" : " (pandoc not installed: column skipped)"}`,
    value: lines.join("; "),
  });
}
