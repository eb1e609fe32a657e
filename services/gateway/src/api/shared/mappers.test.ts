// The HTTP ↔ proto page setup mapper: validated PATCH bodies in, reply objects out.
import { commonV1 } from "@redline/grpc-stubs";
import { describe, expect, it } from "vitest";
import { type PageSetupJson, pageSetupFromJson, pageSetupToJson } from "./mappers.js";

/** Through the mapper and the wire, back to HTTP JSON text. */
function roundTrip(json: PageSetupJson): string {
  const wire = commonV1.PageSetup.encode(pageSetupFromJson(json)).finish();
  return JSON.stringify(pageSetupToJson(commonV1.PageSetup.decode(wire)));
}

describe("page setup over HTTP", () => {
  it("answers in the member order Postgres jsonb stores", () => {
    expect(roundTrip({ size: "A4", orientation: "landscape", margins: "narrow" })).toBe(
      '{"size":"A4","margins":"narrow","orientation":"landscape"}',
    );
    expect(
      roundTrip({
        size: { width: 8.5, height: 11 },
        orientation: "portrait",
        margins: { top: 1, right: 2, bottom: 3, left: 4 },
      }),
    ).toBe(
      '{"size":{"width":8.5,"height":11},"margins":{"top":1,"left":4,"right":2,"bottom":3},"orientation":"portrait"}',
    );
  });

  it("keeps null margins, missing keys and an empty object, and is null when absent", () => {
    expect(roundTrip({ size: "Letter", margins: null })).toBe('{"size":"Letter","margins":null}');
    expect(roundTrip({ orientation: "portrait" })).toBe('{"orientation":"portrait"}');
    expect(roundTrip({})).toBe("{}");
    expect(pageSetupToJson(undefined)).toBeNull();
  });
});
