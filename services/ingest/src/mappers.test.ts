// Reader page setups → proto, and an export request's proto page setup → the layout's input.
import { describe, expect, it } from "vitest";
import { pageSetupFromProto, pageSetupToProto } from "./mappers.js";

describe("page setup mapper", () => {
  it("carries a reader's page setup, null margins included", () => {
    const docx = {
      size: "A4" as const,
      orientation: "portrait" as const,
      margins: { top: 1, right: 1, bottom: 1, left: 1 },
    };
    expect(pageSetupFromProto(pageSetupToProto(docx))).toEqual(docx);
    expect(pageSetupToProto({ size: { width: 5, height: 7 }, orientation: "landscape", margins: null })).toEqual({
      sizeInches: { width: 5, height: 7 },
      orientation: "landscape",
      marginsNull: 0,
    });
    expect(pageSetupToProto(null)).toBeUndefined();
  });

  it("falls back as the layout always did: Letter, portrait, and preset margins by name", () => {
    expect(pageSetupFromProto({ sizeName: "a4", marginsName: "Narrow" })).toEqual({
      size: "A4",
      orientation: "portrait",
      margins: { top: 0.5, right: 0.5, bottom: 0.5, left: 0.5 },
    });
    expect(pageSetupFromProto({ sizeName: "Tabloid", orientation: "sideways", marginsName: "huge" })).toEqual({
      size: "Letter",
      orientation: "portrait",
      margins: null,
    });
    expect(pageSetupFromProto(undefined)).toBeNull();
  });
});
