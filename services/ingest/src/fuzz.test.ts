// Hostile-input smoke test: corrupted corpus files and random bytes must end in a result or a
// 4xx catalog error, never an unexpected exception (which would surface as a 500).
import { RedlineError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { convertDocument } from "./convert.js";
import { convertInProcess } from "./convert-in-process.js";
import { DEFAULT_LIMITS, type DocumentFormat } from "./formats.js";
import { ConverterPool } from "./sandbox/pool.js";
import { readCorpus } from "./testing/corpus.js";

/** Deterministic PRNG (mulberry32) so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(bytes: Buffer, random: () => number): Buffer {
  const out = Buffer.from(bytes);
  const flips = 1 + Math.floor(random() * 20);
  for (let i = 0; i < flips; i++) out[Math.floor(random() * out.length)] = Math.floor(random() * 256);
  // Sometimes cut the tail off too.
  return random() < 0.3 ? out.subarray(0, Math.floor(out.length * random())) : out;
}

async function outcome(run: () => Promise<unknown>): Promise<"ok" | number> {
  try {
    await run();
    return "ok";
  } catch (err) {
    if (err instanceof RedlineError) return err.httpStatus;
    throw err;
  }
}

const SAMPLES: [DocumentFormat, string][] = [
  ["docx", "docx/tika-testWORD_various.docx"],
  ["docx", "docx/pydocx-tbl-cell-access-merged.docx"],
  ["rtf", "rtf/tika-testRTFVarious.rtf"],
  ["html", "html/readability-v8-blog.html"],
  ["md", "md/tika-testMARKDOWN.md"],
  ["txt", "txt/tika-testTXTNonASCIIUTF8.txt"],
];

describe("hostile input", () => {
  it.each(SAMPLES)("corrupted %s (%s) converts or is refused with a 4xx", async (format, rel) => {
    const original = readCorpus(rel);
    const random = rng(rel.length);
    for (let i = 0; i < 40; i++) {
      const result = await outcome(() =>
        convertInProcess(format, `f.${format}`, mutate(original, random), DEFAULT_LIMITS),
      );
      if (result !== "ok") expect(result).toBeGreaterThanOrEqual(400);
      if (result !== "ok") expect(result).toBeLessThan(500);
    }
  });

  it("RTF control words named like Object.prototype members are plain unknown words", async () => {
    const result = await convertInProcess(
      "rtf",
      "p.rtf",
      Buffer.from("{\\rtf1 {\\constructor x}\\toString \\valueOf hi\\par}"),
      DEFAULT_LIMITS,
    );
    // The space after a control word is its delimiter, not text.
    expect(result.html).toBe("<p>xhi</p>");
  });

  describe("pdf in workers", () => {
    const pool = new ConverterPool({ size: 2 });
    afterAll(() => pool.close());

    it("corrupted PDFs convert or are refused with a 4xx", async () => {
      const original = readCorpus("pdf/tika-testPDFVarious.pdf");
      const random = rng(7);
      for (let i = 0; i < 8; i++) {
        const result = await outcome(() =>
          convertDocument("f.pdf", mutate(original, random), { timeoutMs: 20_000 }, pool),
        );
        if (result !== "ok") expect(result).toBe(400);
      }
    }, 120_000);
  });
});
