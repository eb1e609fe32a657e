// diffChunks: the operations a human save turns into (pure; the system tests cover the commit).
import { applyOperations, type ChunkRecord } from "@redline/html-chunks";
import { describe, expect, it } from "vitest";
import { loadChunks } from "./load.js";
import { diffChunks, longestIncreasing, saveChunks } from "./save.js";

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

describe("saveChunks", () => {
  const base: ChunkRecord[] = [
    { chunkId: "c_head", html: `<p data-chunk-id="c_head" data-part="header" data-variant="default">H</p>` },
    chunk("c_a", "A"),
  ];

  it("keeps the ids and parts the client received", () => {
    expect(saveChunks(base.map((c) => c.html).join("\n"), base)).toEqual(base);
  });

  it("re-mints unknown and duplicate ids and drops parts a chunk did not have", () => {
    const next = saveChunks(
      `${base[0].html}<p data-chunk-id="c_a" data-part="footer">A</p><p data-chunk-id="c_a">dup</p><p data-chunk-id="c_other" data-part="header">x</p>`,
      base,
    );
    expect(next[0]).toEqual(base[0]);
    expect(next[1]).toEqual(chunk("c_a", "A"));
    expect(next[2].chunkId).not.toMatch(/^c_(a|head)$/);
    expect(next[3].chunkId).not.toBe("c_other");
    expect(next[3].html).toBe(`<p data-chunk-id="${next[3].chunkId}">x</p>`);
  });
});

describe("loadChunks", () => {
  const html = `<p data-chunk-id="c_h" data-part="header" data-variant="first">H</p><p data-chunk-id="c_b">B</p>`;

  it("drops part marks from caller-written HTML, keeping well-formed ids", () => {
    expect(loadChunks(html)).toEqual([
      { chunkId: "c_h", html: `<p data-chunk-id="c_h">H</p>` },
      { chunkId: "c_b", html: `<p data-chunk-id="c_b">B</p>` },
    ]);
  });

  it("keeps them for converter output that carries the file's own parts", () => {
    expect(loadChunks(html, true)[0].html).toBe(`<p data-chunk-id="c_h" data-part="header" data-variant="first">H</p>`);
  });
});
