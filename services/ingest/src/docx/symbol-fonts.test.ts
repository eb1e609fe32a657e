// Symbol-font characters (issue #32, part 6): Symbol and Wingdings glyph codes read as the
// Unicode characters they show, in the body and in a footer; an unmapped glyph left out with a
// warning, never shown as a private-use character.
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { symbolFontsDocx } from "../testing/fidelity-docs.js";
import { symbolText } from "./symbol-fonts.js";

describe("symbol fonts", () => {
  it("maps Symbol and Wingdings glyph codes in the body and the footer, and leaves out what has no mapping", async () => {
    const { html, warnings } = await convertDocx(await symbolFontsDocx(), "symbols.docx", DEFAULT_LIMITS);
    expect(html).toContain("Angle α ≥ π");
    expect(html).toContain("☑ Approved ✓");
    expect(html).toContain("Pencil  here");
    expect(html).toContain("• Bullet by w:sym");
    expect(html).toMatch(/data-part="footer"[^>]*>✓</);
    expect(html).not.toMatch(/[\uF020-\uF0FF]/);
    expect(warnings).toContain(
      "1 characters of a symbol font (Symbol, Wingdings) have no Unicode equivalent and were left out",
    );
  });

  it("reads a glyph code stored as its byte the same as its private-use form", () => {
    const dropped = { count: 0 };
    expect(symbolText("abg\uF064", "symbol", dropped)).toBe("αβγδ");
    expect(symbolText("\uF0A5 & x", "symbol", dropped)).toBe("∞ & ξ");
    expect(dropped.count).toBe(0);
    expect(symbolText("\uF0FF", "wingdings", dropped)).toBe("");
    expect(dropped.count).toBe(1);
  });
});
