// The offline parser on hostile input: the same answers as the regex parser it replaced
// (differential property test on short messages), and time linear in the message on the
// adversarial shapes that made the old one cubic or quadratic, at the API's maximum size.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseFilesInstruction } from "./files-tools.js";
import { MAX_PARSED_MESSAGE_CHARS, parseOfflineInstruction } from "./offline-parse.js";
import { legacyParseOfflineInstruction } from "./test-support/legacy-offline-parse.js";

const MAX = MAX_PARSED_MESSAGE_CHARS;

// Every code unit regex \s matches, and a few that look like spaces but are not.
const SPACES = [
  " ",
  "\t",
  "\n",
  "\v",
  "\f",
  "\r",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
];
const MORE_SPACES = ["\u205f", "\u3000", "\ufeff", "\u200b", "\u180e"];
const QUOTES = ['"', "“", "”", "‘", "’", "'"];
// The grammar's words (both parsers' keywords, fillers included) and a few near misses.
const WORDS = (
  "replace change substitute all occurrences instances of every occurrence instance the text word phrase with " +
  "to by into for everywhere throughout document in within inside under section heading rename title as " +
  "delete remove first paragraph block chunk containing that contains which mentioning mentions add insert " +
  "append a an new saying at end after below following called titled named content body row table # 2 12 " +
  "second last 3rd 21st make set format put mark bold italic italics italicized emphasized embolden italicize " +
  "emphasise show display print read view get me please kindly can could would will you i want i'd like " +
  "thanks thank draft write create generate start outline about on search attachments attachment quote " +
  "template from DRAFT Outline PLEASE Replace outlines pleased ſ K İ don't x 2."
).split(" ");

/** Short messages from the grammar's alphabet: words, quotes, spaces and punctuation, mixed. */
const grammarMessage = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
      { weight: 3, arbitrary: fc.constantFrom(...QUOTES) },
      { weight: 4, arbitrary: fc.constantFrom(...SPACES, ...MORE_SPACES) },
      { weight: 1, arbitrary: fc.constantFrom(".", "!", "?", ",", ";", ":", "|", "…") },
      { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom(...QUOTES), fc.constantFrom(...WORDS), fc.constantFrom(...QUOTES))
          .map(([open, word, close]) => `${open}${word}${close}`),
      },
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(""));

/** Messages that are instructions, possibly with their arguments' quotes and spacing varied. */
const instructionMessage = fc
  .tuple(
    fc.constantFrom(
      'replace "a" with "b"',
      "please replace ‘don't’ with “do not” in the section 'Term' thanks",
      "rename heading “x” to ”y”",
      'delete the first paragraph that contains "x"',
      'add a new paragraph with text "x" at the end of section "y"',
      'insert section called "x" with the body "y" below heading "z"',
      'add row "a | b" to the 3rd table',
      'add row containing "a" to the table in section "s"',
      'make every occurrence of "x" as bold',
      'embolden all "x"',
      'could you show me the section "x"',
      "can you draft an outline for “Q3 plan”.",
      "Please write me a document outline about remote work!!",
      "draft the outline",
      "make an outline of",
      "start outline on   ",
    ),
    fc.constantFrom(...SPACES, ...MORE_SPACES),
    fc.constantFrom("", ".", " ?!", " thank you", " please", "\u00a0"),
  )
  .chain(([text, space, tail]) =>
    // Each quote of the instruction replaced by any quote character (balanced or not).
    fc
      .tuple(
        fc.array(fc.constantFrom(...QUOTES), { minLength: 6, maxLength: 6 }),
        fc.array(fc.constantFrom("", "", "", ",", ":", ".", ";", "!"), { minLength: 24, maxLength: 24 }),
      )
      .map(([quotes, marks]) => {
        let q = 0;
        let m = 0;
        const requoted = text.replace(/["“”‘’']/g, (c) => (q < quotes.length && c !== "'" ? quotes[q++] : c));
        // Some words get trailing punctuation, which keywords ignore.
        return requoted.replace(/ /g, () => `${marks[m++ % marks.length]}${space}`) + tail;
      }),
  );

const ADVERSARIAL: [string, (n: number) => string][] = [
  ["draft an outline for a + spaces + x", (n) => `draft an outline for a${" ".repeat(n - 23)}x`],
  ["draft an outline for + spaces", (n) => `draft an outline for${" ".repeat(n - 20)}`],
  ["curly opening quotes", (n) => "“".repeat(n)],
  ["straight quotes", (n) => '"'.repeat(n)],
  ["alternating quote styles", (n) => "“\"‘'”’".repeat(n / 6)],
  ["single quotes opening words", (n) => "‘a".repeat(n / 2)],
  ["apostrophes inside words", (n) => "'a'".repeat(n / 3)],
  ["replace repeated", (n) => "replace ".repeat(n / 8)],
  ["replace with a long unclosed argument", (n) => `replace "${"a ".repeat((n - 10) / 2)}`],
  ["leading courtesy words", (n) => `${"please ".repeat((n - 30) / 7)}replace "a" with "b"`],
  ["trailing courtesy words", (n) => `x ${"please thank you ".repeat((n - 2) / 17)}`],
  ["one-letter filler words", (n) => "i ".repeat(n / 2)],
  ["punctuation then a letter", (n) => `x ${".".repeat(n - 3)}x`],
  ["spaces then a letter", (n) => `${" ".repeat(n - 1)}x`],
  ["digits in add row", (n) => `add row "a" to table ${"1".repeat(n - 21)}`],
  ["search attachments, unclosed", (n) => `search attachments for "${" ".repeat(n - 24)}`],
  ["quote attachment about, repeated", (n) => `quote attachment "a"${" about".repeat((n - 20) / 6)}`],
  ["draft from template, spaces", (n) => `draft from template "a"${" ".repeat(n - 24)}x`],
];

/** Milliseconds of one parse by both front doors of the offline engine. */
function parseMs(message: string): number {
  const started = performance.now();
  parseFilesInstruction(message);
  parseOfflineInstruction(message);
  return performance.now() - started;
}

describe("parseOfflineInstruction: the same answers as the regex parser it replaced", () => {
  it("on short messages from the grammar's alphabet", () => {
    fc.assert(
      fc.property(grammarMessage, (message) => {
        expect(parseOfflineInstruction(message)).toEqual(legacyParseOfflineInstruction(message));
      }),
      { numRuns: 3000 },
    );
  });

  it("on instructions with varied quotes, spaces and endings", () => {
    fc.assert(
      fc.property(instructionMessage, (message) => {
        expect(parseOfflineInstruction(message)).toEqual(legacyParseOfflineInstruction(message));
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ["draft an outline for", "(no topic: not an outline)"],
    ["draft an outline for ", "one space"],
    ["draft an outline for  ", "two spaces"],
    ["draft an outline for ...", "punctuation only"],
    ["draft an outline for a   x  .!? ", "spaces inside and after"],
    ["DRAFT  ME\tAN\u00a0DOCUMENT OUTLINE ON 'x'", "case and odd spaces"],
    ["draft an outlines", "a longer word"],
    ["please please please make it bold", "fillers only"],
    ["replace 'a' with 'b' thank you please", "trailing fillers"],
    ["please thanks", "a filler alone"],
  ])("%s (%s)", (message) => {
    expect(parseOfflineInstruction(message)).toEqual(legacyParseOfflineInstruction(message));
  });
});

describe("parseOfflineInstruction on adversarial input of the maximum size", () => {
  it.each(ADVERSARIAL)("%s parses in well under a second", (_name, make) => {
    const message = make(MAX).slice(0, MAX);
    expect(message.length).toBeGreaterThan(MAX * 0.99);
    expect(parseMs(message)).toBeLessThan(1000);
  });

  it("random messages of 100,000 characters from the grammar's alphabet parse in well under a second", () => {
    fc.assert(
      fc.property(fc.array(grammarMessage, { minLength: 1, maxLength: 8 }), fc.nat(), (pieces, seed) => {
        // Repeating a few random pieces up to the maximum keeps generation cheap.
        const unit = pieces.join(" ") || "x";
        const message = unit
          .repeat(Math.ceil(MAX / unit.length))
          .slice(seed % unit.length)
          .slice(0, MAX);
        expect(parseMs(message)).toBeLessThan(1000);
      }),
      { numRuns: 40 },
    );
  });

  it("still understands an instruction padded to the maximum with courtesy words and spaces", () => {
    const padded = `${"please ".repeat(7000)}replace “Acme” with “Globex”${" ".repeat(40_000)}thanks`;
    expect(padded.length).toBeLessThanOrEqual(MAX);
    expect(parseOfflineInstruction(padded)).toEqual({ kind: "replace", find: "Acme", replacement: "Globex" });
    const longArgument = `add paragraph "${"x".repeat(MAX - 50)}" after section "Term"`;
    expect(parseOfflineInstruction(longArgument)).toMatchObject({ kind: "add-paragraph", section: "Term" });
  });

  it("does not parse a message over the API's maximum", () => {
    expect(parseOfflineInstruction(`replace "a" with "b"${" ".repeat(MAX)}`)).toEqual({ kind: "unknown" });
  });
});
