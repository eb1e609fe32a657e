// (k) ingest scaling for `pnpm bench k`: a txt export, an html → docx export and an HTML upload
// conversion of generated 1, 2, 4 and 8 MB documents, through the worker pool as the service
// runs them. Printed: time per MB at each size and time(8 MB) / time(1 MB) against the linear 8
// (target <= 12; a quadratic step would give ~64).
import { ConverterPool, convertDocument, type ExportFormat, exportDocument } from "@redline/ingest";
import type { BenchResult } from "./bench-ingest.js";

const SIZES_MB = [1, 2, 4, 8];
const MB = 1024 * 1024;
// Bounds well past what the largest size needs: this measures time, not the refusals.
const LONG_MS = 15 * 60_000;

/** An ordinary document of about `mb` MB: headings, formatted paragraphs, lists and small tables. */
export function scalingDocument(mb: number): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * MB; i++) {
    let block = `<p>Clause ${i}: the <b>Supplier</b> shall deliver the goods <i>on time</i> and in full, as agreed with the <a href="https://example.com/terms">terms</a>. The parties agree that this clause survives termination.</p>\n`;
    if (i % 10 === 0) block = `<h2>Section ${i / 10}</h2>\n${block}`;
    if (i % 25 === 0) block += "<ul><li>First obligation</li><li>Second obligation</li></ul>\n";
    if (i % 50 === 0)
      block += "<table><tr><th>Item</th><th>Price</th></tr><tr><td>Goods</td><td>$20</td></tr></table>\n";
    out.push(block);
    size += block.length;
  }
  return out.join("");
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** Times `run` at every size (one warm-up at 0.25 MB first) and reports the 8 MB / 1 MB ratio. */
async function scale(
  results: BenchResult[],
  name: string,
  docs: Map<number, string>,
  run: (html: string) => Promise<unknown>,
): Promise<void> {
  await run(scalingDocument(0.25));
  const ms = new Map<number, number>();
  for (const mb of SIZES_MB) ms.set(mb, await timed(() => run(docs.get(mb) as string)));
  const ratio = (ms.get(8) as number) / (ms.get(1) as number);
  const perMb = SIZES_MB.map((mb) => `${mb} MB ${((ms.get(mb) as number) / mb).toFixed(0)} ms/MB`).join(", ");
  results.push({
    name: `(k) ingest scaling: ${name} (${SIZES_MB.map((mb) => `${mb} MB ${(ms.get(mb) as number).toFixed(0)} ms`).join(", ")})`,
    value: `${perMb}; time(8 MB)/time(1 MB) = ${ratio.toFixed(1)} (linear 8)`,
    target: "<= 12",
    pass: ratio <= 12,
  });
}

/** Runs (k), appending to `results`; uses its own pool of one worker and closes it. */
export async function benchIngestScaling(results: BenchResult[]): Promise<void> {
  const pool = new ConverterPool({ size: 1 });
  const docs = new Map(SIZES_MB.map((mb) => [mb, scalingDocument(mb)]));
  const deps = {
    maxBytes: Object.fromEntries(["docx", "pdf", "html", "markdown", "txt"].map((f) => [f, 1e12])) as Record<
      ExportFormat,
      number
    >,
    supportEmail: "bench@redline.local",
    resolveImage: async () => null,
    pool,
    timeoutMs: LONG_MS,
  };
  const exportAs = (format: ExportFormat) => (html: string) =>
    exportDocument({ html, format, title: "Scaling", pageSetup: null, options: {} }, deps);
  try {
    await scale(results, "txt export", docs, exportAs("txt"));
    await scale(results, "html → docx export", docs, exportAs("docx"));
    await scale(results, "HTML upload conversion", docs, (html) =>
      convertDocument("scaling.html", Buffer.from(html, "utf8"), { timeoutMs: LONG_MS }, pool),
    );
  } finally {
    await pool.close();
  }
}
