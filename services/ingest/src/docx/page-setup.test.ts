import { describe, expect, it } from "vitest";
import { docxPageSetup, measureToInches, paperSize } from "./page-setup.js";

const doc = (sectPr: string) => `<w:document><w:body><w:p/>${sectPr}</w:body></w:document>`;

describe("docx page setup", () => {
  it("names A4 (both Word roundings), Letter and Legal in either orientation", () => {
    expect(paperSize(11906 / 1440, 16838 / 1440)).toBe("A4");
    expect(paperSize(16839 / 1440, 11907 / 1440)).toBe("A4");
    expect(paperSize(8.5, 11)).toBe("Letter");
    expect(paperSize(14, 8.5)).toBe("Legal");
    expect(paperSize(5.83, 8.27)).toEqual({ width: 5.83, height: 8.27 });
  });

  it("reads twips and ISO Strict universal measures", () => {
    expect(measureToInches("1440")).toBe(1);
    expect(measureToInches("2.54cm")).toBeCloseTo(1);
    expect(measureToInches("72pt")).toBe(1);
    expect(measureToInches("wide")).toBeNull();
  });

  it("uses the body's last sectPr, ignoring earlier sections and tracked section changes", () => {
    const xml = doc(
      '<w:p><w:pPr><w:sectPr><w:pgSz w:w="12240" w:h="20160"/></w:sectPr></w:pPr></w:p>' +
        '<w:sectPr><w:pgSz w:w="16838" w:h="11906" w:orient="landscape"/><w:pgMar w:top="-1440" w:right="720" w:bottom="1440" w:left="720" w:header="708"/>' +
        '<w:sectPrChange w:id="1"><w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:sectPrChange></w:sectPr>',
    );
    expect(docxPageSetup(xml)).toEqual({
      size: "A4",
      orientation: "landscape",
      margins: { top: 1, right: 0.5, bottom: 1, left: 0.5 },
    });
  });

  it("returns null without a page size, and null margins without w:pgMar", () => {
    expect(docxPageSetup(doc(""))).toBeNull();
    expect(docxPageSetup(doc('<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr>'))).toEqual({
      size: "Letter",
      orientation: "portrait",
      margins: null,
    });
  });
});
