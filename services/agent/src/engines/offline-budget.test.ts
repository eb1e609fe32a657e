// The offline engine's bound on one turn's work: document passes yield to the event loop, stop
// past the processing budget without changing anything, and hostile arguments (a 100,000-char
// section name, a find text longer than a regex may be) are answered quickly.
import { WorkingDocument } from "@redline/html-chunks";
import { describe, expect, it } from "vitest";
import { createOfflineEngine, MAX_PHRASE_CHARS } from "./offline.js";
import { MAX_PARSED_MESSAGE_CHARS } from "./offline-parse.js";
import { BudgetExceededError, TurnBudget } from "./turn-budget.js";
import { plainTurn, type TurnOutput } from "./types.js";

/** A contract of `sections` h2 sections, each a heading and 9 paragraphs. */
function contract(sections: number): string {
  const parts: string[] = [];
  for (let s = 1; s <= sections; s++) {
    parts.push(`<h2>${s}. Obligations ${s}</h2>`);
    for (let p = 1; p <= 9; p++) {
      parts.push(
        `<p>Clause ${s}.${p}. The Provider shall deliver the services with <strong>reasonable skill and care</strong> and remedy defects within ten business days.</p>`,
      );
    }
  }
  return parts.join("\n");
}

async function turn(
  message: string,
  doc: WorkingDocument,
  engine = createOfflineEngine(),
): Promise<{ out: TurnOutput; ms: number }> {
  const started = performance.now();
  const out = await engine.runTurn(plainTurn(message, doc));
  return { out, ms: performance.now() - started };
}

describe("offline engine: the work of one turn is bounded", () => {
  it("yields to the event loop during a long document pass", async () => {
    const doc = WorkingDocument.fromHtml(contract(300));
    doc.outline(); // chunk info cached, as after loading
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 2);
    try {
      const { out } = await turn('replace "Provider" with "Supplier"', doc);
      expect(out.reply).toBe('Replaced 2700 occurrences of "Provider" with "Supplier" (2700 blocks changed).');
      longestGap = Math.max(longestGap, performance.now() - last);
    } finally {
      clearInterval(timer);
    }
    // Slices are 20 ms; generous for a loaded machine, far below the pass itself.
    expect(longestGap).toBeLessThan(400);
  });

  it("stops past the processing budget and changes nothing", async () => {
    const doc = WorkingDocument.fromHtml(contract(100));
    const { out } = await turn('replace "Provider" with "Supplier"', doc, createOfflineEngine({ cpuBudgetMs: 1 }));
    expect(out.reply).toMatch(/^That instruction needs more processing than one turn may use/);
    expect(out.reply).toContain('in section "Heading"');
    expect(out.toolCalls).toBe(0);
    expect(doc.operations()).toEqual([]);
  });

  it("answers a 100,000-character section name quickly", async () => {
    const doc = WorkingDocument.fromHtml(contract(20));
    const name = `${":".repeat(MAX_PARSED_MESSAGE_CHARS - 30)}x`;
    const { out, ms } = await turn(`delete section "${name}"`, doc);
    expect(out.reply).toContain("I could not find a section called");
    expect(ms).toBeLessThan(1000);
    expect(doc.operations()).toEqual([]);
  });

  it("refuses a find text or phrase longer than MAX_PHRASE_CHARS instead of failing", async () => {
    const doc = WorkingDocument.fromHtml(contract(2));
    const long = "a".repeat(50_000);
    const replaced = await turn(`replace "${long}" with "b"`, doc);
    expect(replaced.out.reply).toBe(
      `The text to replace is longer than ${MAX_PHRASE_CHARS.toLocaleString("en-US")} characters, so nothing was changed.`,
    );
    const bold = await turn(`make "${long}" bold`, doc);
    expect(bold.out.reply).toContain("The phrase is longer than");
    expect(doc.operations()).toEqual([]);
  });
});

/** Keeps the thread busy for `ms` milliseconds. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning on purpose
  }
}

describe("TurnBudget", () => {
  it("throws past the budget, except while edits are being applied", async () => {
    const budget = new TurnBudget({ budgetMs: 5, sliceMs: 1_000 });
    busy(10);
    await expect(budget.tick()).rejects.toBeInstanceOf(BudgetExceededError);
    await expect(budget.tick(false)).resolves.toBeUndefined();
  });

  it("does not count the time other work runs while the turn has yielded", async () => {
    const budget = new TurnBudget({ budgetMs: 50, sliceMs: 0 });
    for (let i = 0; i < 3; i++) {
      // Another request's work, queued before the turn's yield, runs during it.
      setImmediate(() => busy(30));
      await budget.tick();
    }
    await expect(budget.tick()).resolves.toBeUndefined();
    expect(budget.usedMs).toBeLessThan(50);
  });

  it("rejects with the turn's abort reason after a yield", async () => {
    const controller = new AbortController();
    const budget = new TurnBudget({ budgetMs: 1_000, sliceMs: 0, signal: controller.signal });
    controller.abort(new Error("cap reached"));
    await expect(budget.tick()).rejects.toThrow("cap reached");
  });
});
