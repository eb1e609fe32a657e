// The page setup and event payload mappers: stored jsonb objects ↔ proto, without a database.
import { documentsLibraryV1 } from "@redline/grpc-stubs";
import { describe, expect, it } from "vitest";
import { eventPayload, pageSetupFromProto, pageSetupToProto } from "./mappers.js";

describe("page setup mapper", () => {
  it.each([
    { size: "A4", orientation: "landscape", margins: "narrow" },
    {
      size: { width: 8.5, height: 11 },
      orientation: "portrait",
      margins: { top: 1, right: 1.25, bottom: 1, left: 0.5 },
    },
    { size: "Letter", orientation: "portrait", margins: null },
    { size: "A4" },
    { margins: null },
    {},
  ])("stores %j back as it was", (stored) => {
    expect(pageSetupFromProto(pageSetupToProto(stored))).toEqual(stored);
  });

  it("reads no page setup as absent and drops keys the contract has no place for", () => {
    expect(pageSetupToProto(null)).toBeUndefined();
    expect(pageSetupFromProto(undefined)).toBeUndefined();
    expect(pageSetupToProto({ size: "A4", columns: 2 })).toEqual({ sizeName: "A4" });
  });
});

describe("event payload mapper", () => {
  it("types each stored key and survives the wire", () => {
    const edit = eventPayload({ kind: "edit", chunk_ids: ["c_1", "c_2"], summary: "s" });
    expect(edit).toEqual({ kind: "edit", chunkIds: { ids: ["c_1", "c_2"] }, summary: "s", pageSetupCleared: false });
    const wire = documentsLibraryV1.DocumentEventPayload.encode(edit).finish();
    expect(documentsLibraryV1.DocumentEventPayload.decode(wire)).toMatchObject(edit);
  });

  it("keeps an empty chunk list apart from none, and a cleared page setup apart from an unchanged one", () => {
    expect(eventPayload({ kind: "edit", chunk_ids: [] }).chunkIds).toEqual({ ids: [] });
    expect(eventPayload({ kind: "replace", changed_chunks: 3 })).toMatchObject({
      chunkIds: undefined,
      changedChunks: 3,
    });
    expect(eventPayload({ kind: "metadata", page_setup: null }).pageSetupCleared).toBe(true);
    expect(eventPayload({ kind: "metadata", title: "T" })).toMatchObject({ title: "T", pageSetupCleared: false });
    expect(eventPayload({ kind: "metadata", page_setup: { size: "A4" } }).pageSetup).toEqual({ sizeName: "A4" });
  });
});
