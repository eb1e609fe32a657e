// The offline re-edit rules: redo re-applies the AI's change on the user's text, merge keeps both.
import { describe, expect, it } from "vitest";
import { mergeChunk, redoChunk } from "./re-edit.js";

describe("redoChunk", () => {
  it("re-applies a replaced word where it still occurs in the user's text", () => {
    expect(
      redoChunk("<p>Acme pays in 30 days.</p>", "<p>Globex pays in 30 days.</p>", "<p>Acme pays in 45 days.</p>"),
    ).toBe("<p>Globex pays in 45 days.</p>");
  });

  it("widens the change to whole words", () => {
    expect(redoChunk("<p>Acme Corp</p>", "<p>Acne Corp</p>", "<p>Acme Corp, Acme Ltd</p>")).toBe(
      "<p>Acne Corp, Acme Ltd</p>",
    );
  });

  it("places a pure insertion after the same left context", () => {
    expect(redoChunk("<p>Fee is 10 EUR.</p>", "<p>Fee is 10 EUR plus VAT.</p>", "<p>Fee is 10 EUR. Due now.</p>")).toBe(
      "<p>Fee is 10 EUR plus VAT. Due now.</p>",
    );
  });

  it("falls back to the AI's version when the changed span is gone, and follows deletes", () => {
    expect(redoChunk("<p>old words</p>", "<p>new words</p>", "<p>rewritten entirely</p>")).toBe("<p>new words</p>");
    expect(redoChunk("<p>x</p>", "", "<p>y</p>")).toBe("");
    expect(redoChunk("<p>x</p>", "<p>z</p>", "")).toBe("<p>z</p>");
  });
});

describe("mergeChunk", () => {
  it("keeps the user's text and appends the AI's sentences it lacks, inside the element", () => {
    expect(mergeChunk("<p>One. Two.</p>", "<p>One. Three &amp; four.</p>")).toBe("<p>One. Two. Three &amp; four.</p>");
  });

  it("returns the user's text when nothing is missing, and the other side when one is empty", () => {
    expect(mergeChunk("<p>One. Two.</p>", "<p>Two.</p>")).toBe("<p>One. Two.</p>");
    expect(mergeChunk("", "<p>A.</p>")).toBe("<p>A.</p>");
    expect(mergeChunk("<p>A.</p>", "")).toBe("<p>A.</p>");
  });
});
