// The offline grammar for attachments and templates, and the tools' argument handling.
import { WorkingDocument } from "@redline/html-chunks";
import { describe, expect, it } from "vitest";
import { parseFilesInstruction, runFilesInstruction, runFilesTool } from "./files-tools.js";
import type { TurnFiles } from "./types.js";

const files: TurnFiles = {
  attachmentCount: 1,
  async searchAttachments(query, filename) {
    if (query === "none") return [];
    return [
      { filename: filename ? `${filename}.pdf` : "notes.pdf", chunkIndex: 2, text: `about ${query || "everything"}` },
    ];
  },
  async getTemplate(ref) {
    return ref === "NDA" ? { name: "NDA", title: "NDA", html: "<h1>NDA</h1><p>The parties agree.</p>" } : null;
  },
};

describe("parseFilesInstruction", () => {
  it("reads the three instructions with any quotes, and nothing else", () => {
    expect(parseFilesInstruction('search attachments for "late fees"')).toEqual({
      kind: "search-attachments",
      query: "late fees",
    });
    expect(parseFilesInstruction("Please quote attachment “terms” about ‘refunds’.")).toEqual({
      kind: "quote-attachment",
      name: "terms",
      query: "refunds",
    });
    expect(parseFilesInstruction('create a new document from template "NDA"')).toEqual({
      kind: "draft-from-template",
      name: "NDA",
    });
    expect(parseFilesInstruction('replace "a" with "b"')).toBeNull();
    expect(parseFilesInstruction("search attachments for late fees")).toBeNull();
  });
});

describe("runFilesInstruction", () => {
  it("answers searches and quotes without editing", async () => {
    const doc = WorkingDocument.fromHtml("<p>x</p>");
    const found = await runFilesInstruction({ kind: "search-attachments", query: "fees" }, files, doc);
    expect(found.reply).toContain("notes.pdf (passage 3): “about fees”");
    const none = await runFilesInstruction({ kind: "quote-attachment", name: "a", query: "none" }, files, doc);
    expect(none.reply).toMatch(/has no passage/);
    expect(doc.operations()).toEqual([]);
  });

  it("drafts from a template only into an empty document", async () => {
    const empty = WorkingDocument.fromHtml("");
    const drafted = await runFilesInstruction({ kind: "draft-from-template", name: "NDA" }, files, empty);
    expect(drafted.reply).toMatch(/Drafted a new document from the template “NDA” \(2 blocks\)/);
    expect(empty.toHtml()).toContain("The parties agree.");
    const full = WorkingDocument.fromHtml("<p>x</p>");
    expect((await runFilesInstruction({ kind: "draft-from-template", name: "NDA" }, files, full)).reply).toMatch(
      /already has content/,
    );
    const other = WorkingDocument.fromHtml("");
    expect((await runFilesInstruction({ kind: "draft-from-template", name: "Lease" }, files, other)).reply).toMatch(
      /no template named/,
    );
  });
});

describe("runFilesTool", () => {
  it("returns passages, and errors for bad arguments instead of throwing", async () => {
    const ok = JSON.parse((await runFilesTool(files, "search_attachments", '{"query":"fees"}', undefined)).content);
    expect(ok.passages[0]).toEqual({ filename: "notes.pdf", passage: 3, text: "about fees" });
    const quoted = JSON.parse(
      (await runFilesTool(files, "quote_attachment", '{"filename":"terms"}', undefined)).content,
    );
    expect(quoted.passages[0].filename).toBe("terms.pdf");
    expect(JSON.parse((await runFilesTool(files, "search_attachments", "{}", undefined)).content).error).toMatch(
      /query/,
    );
    expect(JSON.parse((await runFilesTool(files, "quote_attachment", "[", undefined)).content).error).toMatch(/JSON/);
  });
});
