// diffChunks: the operations a human save turns into (pure; the system tests cover the commit).
import { applyOperations, type ChunkRecord } from "@redline/html-chunks";
import { describe, expect, it } from "vitest";
import { diffChunks, longestIncreasing } from "./save.js";

const chunk = (id: string, text: string): ChunkRecord => ({
  chunkId: id,
  html: `<p data-chunk-id="${id}">${text}</p>`,
});

describe("diffChunks", () => {
  const base = [chunk("c_a", "A"), chunk("c_b", "B"), chunk("c_c", "C"), chunk("c_d", "D")];

  it("writes nothing for an unchanged save", () => {
    expect(diffChunks(base, base)).toEqual([]);
  });

  it("replaces edited chunks, inserts new ones after their predecessor, deletes removed ones", () => {
    const next = [chunk("c_a", "A!"), chunk("c_n", "New"), chunk("c_b", "B"), chunk("c_d", "D")];
    const ops = diffChunks(base, next);
    expect(ops.map((op) => [op.kind, op.chunkId])).toEqual([
      ["delete", "c_c"],
      ["replace", "c_a"],
      ["insert", "c_n"],
    ]);
    expect(applyOperations(base, ops)).toEqual(next);
  });

  it("moves a chunk as delete + insert and keeps the longest run in place", () => {
    const next = [base[3], base[0], base[1], base[2]];
    const ops = diffChunks(base, next);
    expect(ops.map((op) => [op.kind, op.chunkId])).toEqual([
      ["delete", "c_d"],
      ["insert", "c_d"],
    ]);
  });

  it("finds a longest increasing run", () => {
    expect([...longestIncreasing([3, 0, 1, 2])].sort()).toEqual([1, 2, 3]);
    expect(longestIncreasing([]).size).toBe(0);
  });
});
