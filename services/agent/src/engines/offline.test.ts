import { type ChunkOperation, WorkingDocument } from "@redline/html-chunks";
import { describe, expect, it } from "vitest";
import { createOfflineEngine, OFFLINE_HELP, parseOfflineInstruction } from "./offline.js";
import { plainTurn, type TurnOutput } from "./types.js";

// Fixture contract: a realistic service agreement. Every chunk carries a fixed id so the
// assertions can name them; headings nest (h3 "Support" inside h2 "1. Scope of Work");
// the table has a styled header row; bold, italic and list markup sit inside the text.
const FIXTURE = {
  title: '<h1 data-chunk-id="c_title">Acme Services Agreement</h1>',
  intro:
    '<p data-chunk-id="c_intro">This agreement is between <strong>Acme Corp</strong> and the Client. Acme provides hosting.</p>',
  scope: '<h2 data-chunk-id="c_scope" style="color: #1f3864; font-family: Georgia">1. Scope of Work</h2>',
  scopeP:
    '<p data-chunk-id="c_scope_p" class="body" style="line-height: 1.5">Acme will deliver the services listed below.</p>',
  scopeList:
    '<ul data-chunk-id="c_scope_list"><li>Hosting of the <em>Acme</em> platform</li><li>Daily backups</li></ul>',
  support: '<h3 data-chunk-id="c_support">Support</h3>',
  supportP: '<p data-chunk-id="c_support_p">Support is available by email. Acme answers within one business day.</p>',
  pricing: '<h2 data-chunk-id="c_pricing" style="color: #1f3864; font-family: Georgia">2. Pricing</h2>',
  table:
    '<table data-chunk-id="c_price_table" style="border-collapse: collapse; width: 100%"><thead><tr><th style="border: 1px solid #999; background: #eee">Plan</th><th style="border: 1px solid #999; background: #eee">Price</th></tr></thead><tbody><tr><td style="border: 1px solid #999">Basic</td><td style="border: 1px solid #999">$10</td></tr></tbody></table>',
  pricingP: '<p data-chunk-id="c_pricing_p" class="body" style="line-height: 1.5">Prices exclude VAT.</p>',
  term: '<h2 data-chunk-id="c_term" style="color: #1f3864; font-family: Georgia">3. Term</h2>',
  termP:
    '<p data-chunk-id="c_term_p">This agreement lasts <b>twelve months</b>. Either party may end it with notice.</p>',
};
const FIXTURE_HTML = Object.values(FIXTURE).join("\n");

const engine = createOfflineEngine();

interface Run {
  out: TurnOutput;
  ops: ChunkOperation[];
  doc: WorkingDocument;
}

/**
 * Runs one instruction on a fresh copy of `html` and checks the invariant every
 * instruction must keep: chunks outside changedChunkIds() are byte-identical.
 */
async function run(message: string, html = FIXTURE_HTML): Promise<Run> {
  const doc = html === "" ? new WorkingDocument([]) : WorkingDocument.fromHtml(html);
  const before = new Map(doc.chunks().map((chunk) => [chunk.chunkId, chunk.html]));
  const progress: string[] = [];
  const out = await engine.runTurn(
    plainTurn(message, doc, { documentTitle: "Acme Services Agreement", onProgress: (text) => progress.push(text) }),
  );
  const changed = new Set(doc.changedChunkIds());
  for (const chunk of doc.chunks()) {
    if (!changed.has(chunk.chunkId)) expect(chunk.html).toBe(before.get(chunk.chunkId));
  }
  expect(out.bytesSentToModel).toBe(0);
  return { out, ops: doc.operations(), doc };
}

describe("offline engine fixture", () => {
  it("chunks as the contract says (ids kept, one chunk per block)", () => {
    const doc = WorkingDocument.fromHtml(FIXTURE_HTML);
    expect(doc.chunks().map((chunk) => chunk.html)).toEqual(Object.values(FIXTURE));
  });
});

describe("parseOfflineInstruction", () => {
  it.each([
    ['replace "Acme" with "Globex"', { kind: "replace", find: "Acme", replacement: "Globex" }],
    ["Change “Acme” to “Globex”.", { kind: "replace", find: "Acme", replacement: "Globex" }],
    [
      "please REPLACE 'don't' with 'do not' in section 'Term'",
      { kind: "replace", find: "don't", replacement: "do not", section: "Term" },
    ],
    ['rename heading "Pricing" to "Fees"', { kind: "rename-heading", heading: "Pricing", newTitle: "Fees" }],
    ["Rename section ‘Term’ to ‘Duration’", { kind: "rename-heading", heading: "Term", newTitle: "Duration" }],
    ['delete section "Pricing"', { kind: "delete-section", section: "Pricing" }],
    ['Remove the paragraph containing "VAT"', { kind: "delete-paragraph", containing: "VAT" }],
    ['insert paragraph "x" after section "Term"', { kind: "add-paragraph", text: "x", section: "Term" }],
    ['add section "Liability" after section "Term"', { kind: "add-section", title: "Liability", section: "Term" }],
    [
      'add section "Liability" after section "Term" with text "None."',
      { kind: "add-section", title: "Liability", section: "Term", body: "None." },
    ],
    ['add row "a | b" to table 2', { kind: "add-row", cells: ["a", "b"], table: { index: 2 } }],
    ['add a row "a|b" to the second table', { kind: "add-row", cells: ["a", "b"], table: { index: 2 } }],
    [
      'add row "a | b" to the table in section "Pricing"',
      { kind: "add-row", cells: ["a", "b"], table: { section: "Pricing" } },
    ],
    ['add row "a | b"', { kind: "add-row", cells: ["a", "b"], table: null }],
    ['make "Acme" bold', { kind: "format", phrase: "Acme", tag: "strong" }],
    ['Make "Acme" italic', { kind: "format", phrase: "Acme", tag: "em" }],
    ['bold "Acme"', { kind: "format", phrase: "Acme", tag: "strong" }],
    ['italicize "Acme"', { kind: "format", phrase: "Acme", tag: "em" }],
    ['show section "Pricing"', { kind: "show-section", section: "Pricing" }],
    ['draft an outline for "Q3 launch plan"', { kind: "draft-outline", topic: "Q3 launch plan" }],
    ["Draft an outline about Remote work policy.", { kind: "draft-outline", topic: "Remote work policy" }],
    ["make it better", { kind: "unknown" }],
    ["replace Acme with Globex", { kind: "unknown" }],
  ])("%s", (message, expected) => {
    expect(parseOfflineInstruction(message)).toEqual(expected);
  });
});

describe("offline engine instructions", () => {
  it("replaces text everywhere, keeping markup and styles", async () => {
    const { out, ops } = await run('replace "Acme" with "Globex"');
    expect(out.reply).toBe('Replaced 6 occurrences of "Acme" with "Globex" (5 blocks changed).');
    const explanation = 'Replaced "Acme" with "Globex"';
    expect(ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_title",
        html: '<h1 data-chunk-id="c_title">Globex Services Agreement</h1>',
        explanation,
      },
      {
        kind: "replace",
        chunkId: "c_intro",
        html: '<p data-chunk-id="c_intro">This agreement is between <strong>Globex Corp</strong> and the Client. Globex provides hosting.</p>',
        explanation,
      },
      {
        kind: "replace",
        chunkId: "c_scope_p",
        html: '<p data-chunk-id="c_scope_p" class="body" style="line-height: 1.5">Globex will deliver the services listed below.</p>',
        explanation,
      },
      {
        kind: "replace",
        chunkId: "c_scope_list",
        html: '<ul data-chunk-id="c_scope_list"><li>Hosting of the <em>Globex</em> platform</li><li>Daily backups</li></ul>',
        explanation,
      },
      {
        kind: "replace",
        chunkId: "c_support_p",
        html: '<p data-chunk-id="c_support_p">Support is available by email. Globex answers within one business day.</p>',
        explanation,
      },
    ]);
    expect(out.toolCalls).toBe(5);
  });

  it("replaces text in one section only (the heading's span, subsections included)", async () => {
    const { out, ops } = await run('change "Acme" to "the Provider" in section "Scope of Work"');
    expect(out.reply).toBe(
      'Replaced 3 occurrences of "Acme" with "the Provider" in section "1. Scope of Work" (3 blocks changed).',
    );
    expect(ops.map((op) => op.chunkId)).toEqual(["c_scope_p", "c_scope_list", "c_support_p"]);
    expect(ops[2]).toEqual({
      kind: "replace",
      chunkId: "c_support_p",
      html: '<p data-chunk-id="c_support_p">Support is available by email. the Provider answers within one business day.</p>',
      explanation: 'Replaced "Acme" with "the Provider"',
    });
  });

  it("falls back to case-insensitive matching only when the exact case finds nothing", async () => {
    const { out, ops } = await run('replace "vat" with "sales tax"');
    expect(out.reply).toBe('Replaced 1 occurrence of "vat" with "sales tax" (1 block changed).');
    expect(ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_pricing_p",
        html: '<p data-chunk-id="c_pricing_p" class="body" style="line-height: 1.5">Prices exclude sales tax.</p>',
        explanation: 'Replaced "vat" with "sales tax"',
      },
    ]);
  });

  it("renames a heading, keeping its tag, attributes and numbering", async () => {
    const { out, ops } = await run("Rename heading 'pricing' to 'Fees & Payment'");
    expect(out.reply).toBe('Renamed heading "2. Pricing" to "2. Fees & Payment".');
    expect(ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_pricing",
        html: '<h2 data-chunk-id="c_pricing" style="color: #1f3864; font-family: Georgia">2. Fees &amp; Payment</h2>',
        explanation: 'Renamed heading "2. Pricing" to "2. Fees & Payment"',
      },
    ]);
    const renamed = await run('rename section "Support" to "Help desk"');
    expect(renamed.ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_support",
        html: '<h3 data-chunk-id="c_support">Help desk</h3>',
        explanation: 'Renamed heading "Support" to "Help desk"',
      },
    ]);
  });

  it("deletes a whole section with its subsections", async () => {
    const { out, ops, doc } = await run('delete section "1. Scope of Work"');
    expect(out.reply).toBe('Deleted section "1. Scope of Work" (5 blocks).');
    expect(ops).toEqual(
      ["c_scope", "c_scope_p", "c_scope_list", "c_support", "c_support_p"].map((chunkId) => ({
        kind: "delete",
        chunkId,
        explanation: 'Deleted with section "1. Scope of Work"',
      })),
    );
    expect(doc.chunks().map((chunk) => chunk.chunkId)).toEqual([
      "c_title",
      "c_intro",
      "c_pricing",
      "c_price_table",
      "c_pricing_p",
      "c_term",
      "c_term_p",
    ]);
  });

  it("deletes the first paragraph containing a text and says when others match", async () => {
    const { out, ops } = await run('delete paragraph containing "acme"');
    expect(out.reply).toBe(
      'Deleted the paragraph containing "acme" ("This agreement is between Acme Corp and the Client. Acme…"). 3 other blocks also contain that text and were kept.',
    );
    expect(ops).toEqual([
      { kind: "delete", chunkId: "c_intro", explanation: 'Deleted the paragraph containing "acme"' },
    ]);
    const single = await run('delete paragraph containing "Either party"');
    expect(single.out.reply).toBe(
      'Deleted the paragraph containing "Either party" ("This agreement lasts twelve months. Either party may end…").',
    );
    expect(single.ops.map((op) => [op.kind, op.chunkId])).toEqual([["delete", "c_term_p"]]);
  });

  it("adds a paragraph after the last chunk of a section, styled like its paragraphs", async () => {
    const { out, ops } = await run('add paragraph "Phone support costs extra." after section "scope of work"');
    expect(out.reply).toBe('Added a paragraph at the end of section "1. Scope of Work".');
    expect(ops).toHaveLength(1);
    const op = ops[0];
    expect(op.kind).toBe("insert");
    if (op.kind !== "insert") return;
    // The span of "1. Scope of Work" ends with its subsection's last paragraph.
    expect(op.afterChunkId).toBe("c_support_p");
    expect(op.html).toBe(
      `<p data-chunk-id="${op.chunkId}" class="body" style="line-height: 1.5">Phone support costs extra.</p>`,
    );
    expect(op.explanation).toBe('Added a paragraph to section "1. Scope of Work"');
  });

  it("adds a section at the anchor heading's level, with and without body text", async () => {
    const { out, ops, doc } = await run(
      'add section "Liability" after section "Pricing" with text "Liability is capped at the fees paid."',
    );
    expect(out.reply).toBe('Added section "Liability" after section "2. Pricing" with your text.');
    expect(ops.map((op) => op.kind)).toEqual(["insert", "insert"]);
    const [heading, body] = ops;
    if (heading.kind !== "insert" || body.kind !== "insert") return;
    expect(heading.afterChunkId).toBe("c_pricing_p");
    expect(heading.html).toBe(
      `<h2 data-chunk-id="${heading.chunkId}" style="color: #1f3864; font-family: Georgia">Liability</h2>`,
    );
    expect(body.afterChunkId).toBe(heading.chunkId);
    expect(body.html).toBe(
      `<p data-chunk-id="${body.chunkId}" class="body" style="line-height: 1.5">Liability is capped at the fees paid.</p>`,
    );
    expect(
      doc
        .chunks()
        .map((chunk) => chunk.chunkId)
        .slice(10, 13),
    ).toEqual([heading.chunkId, body.chunkId, "c_term"]);

    const bare = await run('insert section "Escalation" after section "Support"');
    expect(bare.out.reply).toBe('Added section "Escalation" after section "Support" with a placeholder paragraph.');
    const [h3, p] = bare.ops;
    if (h3.kind !== "insert" || p.kind !== "insert") return;
    expect(h3.afterChunkId).toBe("c_support_p");
    expect(h3.html).toBe(`<h3 data-chunk-id="${h3.chunkId}">Escalation</h3>`);
    expect(p.html).toBe(`<p data-chunk-id="${p.chunkId}">Write the Escalation section here.</p>`);
  });

  it("adds a table row copying the previous row's cell styles", async () => {
    const expected = FIXTURE.table.replace(
      "</tr></tbody>",
      '</tr><tr><td style="border: 1px solid #999">Pro</td><td style="border: 1px solid #999">$20</td></tr></tbody>',
    );
    for (const message of [
      'add row "Pro | $20" to table 1',
      'Add a row "Pro | $20" to the table in section "Pricing"',
      'add row "Pro|$20"',
    ]) {
      const { out, ops } = await run(message);
      expect(ops).toEqual([
        { kind: "replace", chunkId: "c_price_table", html: expected, explanation: "Added a row (Pro | $20)" },
      ]);
      expect(out.reply).toMatch(
        /^Added a row with 2 cells to (table 1|the table in section "2\. Pricing"|the table)\.$/,
      );
    }
  });

  it("makes every occurrence of a phrase bold or italic", async () => {
    const bold = await run('make "Acme" bold');
    // "Acme Corp" is already bold, so only the other 5 occurrences are wrapped.
    expect(bold.out.reply).toBe('Made 5 occurrences of "Acme" bold (5 blocks changed).');
    expect(bold.ops.find((op) => op.chunkId === "c_intro")).toEqual({
      kind: "replace",
      chunkId: "c_intro",
      html: '<p data-chunk-id="c_intro">This agreement is between <strong>Acme Corp</strong> and the Client. <strong>Acme</strong> provides hosting.</p>',
      explanation: 'Made "Acme" bold',
    });
    const italic = await run('italicize "Either party"');
    expect(italic.out.reply).toBe('Made 1 occurrence of "Either party" italic (1 block changed).');
    expect(italic.ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_term_p",
        html: '<p data-chunk-id="c_term_p">This agreement lasts <b>twelve months</b>. <em>Either party</em> may end it with notice.</p>',
        explanation: 'Made "Either party" italic',
      },
    ]);
  });

  it("shows a section in the reply and changes nothing", async () => {
    const { out, ops } = await run('show section "Scope of Work"');
    expect(ops).toEqual([]);
    expect(out.toolCalls).toBe(0);
    expect(out.reply).toBe(
      [
        'Here is section "1. Scope of Work" (5 blocks); nothing was changed.',
        "",
        "## 1. Scope of Work",
        "",
        "Acme will deliver the services listed below.",
        "",
        "- Hosting of the Acme platform\n- Daily backups",
        "",
        "### Support",
        "",
        "Support is available by email. Acme answers within one business day.",
      ].join("\n"),
    );
    const pricing = await run('show section "pricing"');
    expect(pricing.out.reply).toContain("Plan | Price\nBasic | $10");
  });

  it("drafts an outline into an empty document", async () => {
    const { out, ops, doc } = await run('draft an outline for "Q3 launch plan"', "");
    expect(out.reply).toBe(
      'Drafted an outline for "Q3 launch plan": a title and 6 sections (Goals, Current situation, Approach, Milestones, Risks, Measuring success), each with a placeholder paragraph.',
    );
    expect(ops.every((op) => op.kind === "insert")).toBe(true);
    const tags = doc.outline().map((entry) => entry.tag);
    expect(tags).toEqual(["h1", ...Array(6).fill(["h2", "p"]).flat()]);
    expect(doc.chunks()[0].html).toMatch(/^<h1 data-chunk-id="c_[0-9a-v]{10}">Q3 launch plan<\/h1>$/);
    expect(doc.outline()[2].preview).toBe("State what Q3 launch plan aims to achieve.");
    const sectionCount = doc.outline().filter((entry) => entry.level === 2).length;
    expect(sectionCount).toBeGreaterThanOrEqual(4);
    expect(sectionCount).toBeLessThanOrEqual(6);

    const unquoted = await run("Draft an outline about remote work", "");
    expect(
      unquoted.doc
        .outline()
        .map((entry) => entry.preview)
        .filter((_, i) => i % 2 === 1),
    ).toEqual(["Introduction", "Background", "Key points", "Discussion", "Conclusion"]);
  });

  it("refuses to draft an outline over existing content", async () => {
    const { out, ops } = await run('draft an outline for "Anything"');
    expect(ops).toEqual([]);
    expect(out.reply).toBe(
      "The document already has content, so I did not draft an outline; drafting only works in an empty document.",
    );
  });

  it("answers an unknown instruction with the help text and no change", async () => {
    const { out, ops } = await run("Please make the tone friendlier");
    expect(ops).toEqual([]);
    expect(out.toolCalls).toBe(0);
    expect(out.reply).toBe(OFFLINE_HELP);
    expect(out.reply).toContain('replace "old" with "new"');
  });

  it.each([
    ['replace "Initech" with "Globex"', 'I could not find "Initech", so nothing was changed.'],
    [
      'replace "Acme" with "Globex" in section "Warranty"',
      'I could not find a section called "Warranty", so nothing was changed. Sections: "Acme Services Agreement", "1. Scope of Work", "Support", "2. Pricing", "3. Term".',
    ],
    ['rename heading "Warranty" to "X"', 'I could not find a section called "Warranty"'],
    ['delete section "Warranty"', 'I could not find a section called "Warranty"'],
    ['delete paragraph containing "force majeure"', 'I could not find a paragraph containing "force majeure"'],
    ['add paragraph "x" after section "Warranty"', 'I could not find a section called "Warranty"'],
    ['add section "X" after section "Warranty"', 'I could not find a section called "Warranty"'],
    ['add row "a | b" to table 3', "There is no table 3: the document has 1 table. Nothing was changed."],
    ['add row "a | b" to the table in section "Term"', 'Section "3. Term" has no table, so nothing was changed.'],
    ['make "Initech" bold', 'I could not find "Initech" outside text that is already bold'],
    ['make "twelve months" bold', 'I could not find "twelve months" outside text that is already bold'],
    ['show section "Warranty"', 'I could not find a section called "Warranty"'],
    [
      'delete section "S"',
      '"S" matches several sections ("1. Scope of Work", "Support"); please use the full heading.',
    ],
    ['replace "Acme" with "Acme"', "are the same, so nothing was changed"],
  ])("%s → no change", async (message, reply) => {
    const { out, ops } = await run(message);
    expect(ops).toEqual([]);
    expect(out.toolCalls).toBe(0);
    expect(out.reply).toContain(reply);
  });

  it("needs a table to be named when there are several", async () => {
    const twoTables = `${FIXTURE_HTML}\n<table data-chunk-id="c_t2"><tr><td>x</td></tr></table>`;
    const { out, ops } = await run('add row "a | b"', twoTables);
    expect(ops).toEqual([]);
    expect(out.reply).toBe(
      'The document has 2 tables; say which one, e.g. add row "…" to table 2. Nothing was changed.',
    );
    const second = await run('add row "y" to the last table', twoTables);
    expect(second.ops).toEqual([
      {
        kind: "replace",
        chunkId: "c_t2",
        html: '<table data-chunk-id="c_t2"><tr><td>x</td></tr><tr><td>y</td></tr></table>',
        explanation: "Added a row (y)",
      },
    ]);
  });

  it("rejects at once when the signal has already fired", async () => {
    const controller = new AbortController();
    controller.abort(new Error("cap reached"));
    await expect(
      engine.runTurn({
        message: 'replace "Acme" with "Globex"',
        document: WorkingDocument.fromHtml(FIXTURE_HTML),
        documentTitle: "",
        history: [],
        modelTier: "core",
        thinkingDepth: "fast",
        images: [],
        signal: controller.signal,
      }),
    ).rejects.toThrow("cap reached");
  });
});
