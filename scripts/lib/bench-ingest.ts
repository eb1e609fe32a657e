// Ingest figures for `pnpm bench`, side by side with the reference tools in the same run:
//   (g) docx → HTML vs pandoc on corpus files (target: no slower), with the tables, cells, list
//       items and footnotes each finds;
//   (h) pdf → text vs pdftotext (target <= 5x slower);
//   (i) HTML → pdf with a warm headless Chromium, p50 of a one-page document.
import { execFileSync } from "node:child_process";
import { closeBrowser, closeDefaultConverterPool, convertDocument, exportDocument, warmBrowser } from "@redline/ingest";
import { corpusPath, readCorpus } from "../../test/fixtures/corpus.js";

/** One line of the bench report. */
export interface BenchResult {
  name: string;
  value: string;
  target?: string;
  pass?: boolean;
}

const DOCX = [
  "docx/tika-testWORD_various.docx",
  "docx/pydocx-tbl-cell-access-merged.docx",
  "docx/poi-IllustrativeCases-budget-tables.docx",
  "docx/tika-testWORD_numbered_list.docx",
  "docx/poi-bug59058-seer-cancer-stats.docx",
  "docx/poi-bug65649-large-procurement-tables.docx",
];
const PDF = [
  "pdf/tika-testPDFVarious.pdf",
  "pdf/irs-fd_ins_8863-2013.pdf",
  "pdf/pdfjs-tracemonkey.pdf",
  "pdf/nd-ins-taxtable-2013.pdf",
  "pdf/tika-testPDF_protected-ownerpw.pdf",
];
const REPEATS = 3;

function hasTool(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed<T>(run: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await run();
  return { ms: performance.now() - started, value };
}

/** Tables, cells, list items and footnotes in an HTML string (ours or pandoc's markup). */
function counts(html: string): { tables: number; cells: number; items: number; notes: number } {
  const n = (re: RegExp) => (html.match(re) ?? []).length;
  return {
    tables: n(/<table\b/g),
    cells: n(/<t[dh]\b/g),
    // Notes lists are lists too; count only the items of the document's own lists.
    items: n(/<li\b/g) - n(/<li\b[^>]*\bid="(?:footnote-|endnote-|fn)\d+"/g),
    notes: n(/<li\b[^>]*\bid="(?:footnote-|endnote-|fn)\d+"/g),
  };
}

const fmt = (c: ReturnType<typeof counts>) => `${c.tables}t/${c.cells}c/${c.items}li/${c.notes}fn`;

/** Median ms of REPEATS runs of `run`, and the last run's output. */
async function repeated(run: () => Promise<string> | string): Promise<{ ms: number; out: string }> {
  const ms: number[] = [];
  let out = "";
  for (let i = 0; i < REPEATS; i++) {
    const one = await timed(run);
    ms.push(one.ms);
    out = one.value;
  }
  return { ms: median(ms), out };
}

type Timing = Awaited<ReturnType<typeof repeated>>;

/**
 * Converts each corpus file with ours (worker warmed first) and with `tool` (given the path,
 * returning its output); sums the medians in ms and keeps one report line per file.
 */
async function versus(
  files: readonly string[],
  tool: (path: string) => string,
  line: (name: string, ours: Timing, theirs: Timing) => string,
): Promise<{ ours: number; theirs: number; lines: string[] }> {
  const total = { ours: 0, theirs: 0, lines: [] as string[] };
  for (const file of files) {
    const bytes = readCorpus(file);
    const name = file.split("/").pop() as string;
    await convertDocument(name, bytes); // warm the worker for this format
    const ours = await repeated(async () => (await convertDocument(name, bytes)).html);
    const theirs = await repeated(() => tool(corpusPath(file)));
    total.ours += ours.ms;
    total.theirs += theirs.ms;
    total.lines.push(line(name, ours, theirs));
  }
  return total;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { maxBuffer: 1 << 28 }).toString();

/** (g) docx → HTML, ours (bounded worker, the production path) vs pandoc, median of REPEATS. */
async function benchDocx(results: BenchResult[]): Promise<void> {
  if (!hasTool("pandoc")) {
    results.push({ name: "(g) docx → HTML vs pandoc", value: "skipped: pandoc is not installed (scripts/setup.sh)" });
    return;
  }
  const { ours, theirs, lines } = await versus(
    DOCX,
    (path) => run("pandoc", ["-f", "docx", "-t", "html", path]),
    (name, o, t) =>
      `${name}: ours ${o.ms.toFixed(0)} ms ${fmt(counts(o.out))}, pandoc ${t.ms.toFixed(0)} ms ${fmt(counts(t.out))}`,
  );
  const ratio = ours / theirs;
  results.push({
    name: `(g) docx → HTML vs pandoc (median of ${REPEATS}; t/c/li/fn = tables/cells/list items/footnotes)\n      ${lines.join("\n      ")}`,
    value: `total ours ${ours.toFixed(0)} ms / pandoc ${theirs.toFixed(0)} ms = ratio ${ratio.toFixed(2)}`,
    target: "<= 1.0",
    pass: ratio <= 1,
  });
}

/** (h) pdf → text, ours (bounded worker) vs pdftotext, median of REPEATS. */
async function benchPdf(results: BenchResult[]): Promise<void> {
  if (!hasTool("pdftotext")) {
    results.push({
      name: "(h) pdf → text vs pdftotext",
      value: "skipped: pdftotext is not installed (scripts/setup.sh)",
    });
    return;
  }
  const { ours, theirs, lines } = await versus(
    PDF,
    (path) => run("pdftotext", [path, "-"]),
    (name, o, t) => `${name}: ours ${o.ms.toFixed(0)} ms, pdftotext ${t.ms.toFixed(0)} ms`,
  );
  const ratio = ours / theirs;
  results.push({
    name: `(h) pdf → text vs pdftotext (median of ${REPEATS})\n      ${lines.join("\n      ")}`,
    value: `total ours ${ours.toFixed(0)} ms / pdftotext ${theirs.toFixed(0)} ms = ratio ${ratio.toFixed(2)}`,
    target: "<= 5",
    pass: ratio <= 5,
  });
}

/** (i) HTML → pdf of a one-page document with the browser already warm: p50 and p90 of 15. */
async function benchHtmlToPdf(results: BenchResult[]): Promise<void> {
  try {
    await warmBrowser();
  } catch (err) {
    results.push({ name: "(i) HTML → pdf", value: `skipped: ${err instanceof Error ? err.message : String(err)}` });
    return;
  }
  const html = `<h1>Quarterly report</h1><p>${"Revenue grew in every region. ".repeat(20)}</p><table><tr><th>Region</th><th>Q3</th></tr><tr><td>EMEA</td><td>1.2</td></tr></table>`;
  const deps = {
    maxBytes: { docx: 1e9, pdf: 1e9, html: 1e9, markdown: 1e9, txt: 1e9 },
    supportEmail: "bench@redline.local",
    resolveImage: async () => null,
  };
  const job = { html, format: "pdf" as const, title: "Report", pageSetup: null, options: {} };
  await exportDocument(job, deps);
  const times: number[] = [];
  for (let i = 0; i < 15; i++) times.push((await timed(() => exportDocument(job, deps))).ms);
  times.sort((a, b) => a - b);
  results.push({
    name: "(i) HTML → pdf, one page, warm Chromium (15 runs)",
    value: `p50 ${times[7].toFixed(0)} ms, p90 ${times[13].toFixed(0)} ms`,
  });
}

/** Runs (g), (h) and (i), appending to `results`; releases the converter pool and the browser. */
export async function benchIngest(results: BenchResult[]): Promise<void> {
  try {
    await benchDocx(results);
    await benchPdf(results);
    await benchHtmlToPdf(results);
  } finally {
    await closeDefaultConverterPool();
    await closeBrowser();
  }
}
