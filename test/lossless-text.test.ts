// Byte-stable Markdown and text (issue #12): a document loaded from .md or .txt keeps its
// original (ingest, under the owner's prefix) and exports back into it: untouched blocks are the
// source's bytes, only edited blocks are re-serialized. Every .md and .txt of the corpus goes
// through the real stack: upload → document, one block edited by a save and by an AI edit
// (offline engine, `replace "…" with "…"` on a word only that block has), export, line diff.
import { readdirSync } from "node:fs";
import { ingestFilesV1 } from "@redline/grpc-stubs";
import { createDb, createRpcClient, type Knex } from "@redline/service-kit";
import { diffLines } from "diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORPUS_DIR, readCorpus } from "./fixtures/corpus.js";
import { startStackWithKey } from "./support/file-stack.js";
import { postMultipart } from "./support/multipart.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let ingestDb: Knex;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "lossless" }, "lena"));
  ingestDb = createDb(stack.databaseUrl, "ingest", 2);
});
afterAll(async () => {
  await ingestDb?.destroy();
  await stack?.close();
});

type Json = Record<string, unknown>;

const FIXTURES = [
  ...readdirSync(`${CORPUS_DIR}/md`).map((f) => ({ name: `md/${f}`, format: "markdown" })),
  ...readdirSync(`${CORPUS_DIR}/txt`).map((f) => ({ name: `txt/${f}`, format: "txt" })),
];

/** Uploads a corpus file into a new session; its session, slot and HTML. */
async function upload(name: string, k = key): Promise<{ sessionId: string; slotId: string; html: string }> {
  const filename = name.split("/").pop() ?? name;
  const res = await postMultipart(stack, "/v1/documents/upload", k, {
    file: { bytes: readCorpus(name), filename },
    return_html: "true",
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Json;
  return { sessionId: body.session_id as string, slotId: body.document_id as string, html: body.html as string };
}

async function exportBytes(sessionId: string, format: string, k = key): Promise<Buffer> {
  const res = await stack.call("POST", "/v1/documents/export", { key: k, body: { session_id: sessionId, format } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The chunks of stored HTML, in order. */
function chunksOf(html: string): { id: string; html: string; text: string }[] {
  return [...html.matchAll(/<([a-z0-9]+) data-chunk-id="([^"]+)"[\s\S]*?<\/\1>/g)].map((m) => ({
    id: m[2],
    html: m[0],
    text: m[0].replace(/<[^>]+>/g, ""),
  }));
}

/** Lines that differ between two texts (added or removed), blank ones left out. */
function changedLines(before: string, after: string): string[] {
  return diffLines(before, after)
    .filter((p) => p.added || p.removed)
    .flatMap((p) => p.value.split(/\r?\n/))
    .filter((l) => l.trim() !== "");
}

const decode = (name: string, bytes: Buffer) => bytes.toString(name.includes("1252") ? "latin1" : "utf8");

/** A paragraph chunk to edit (not the first block), with a word no other block of the file has. */
function pickBlock(name: string, html: string): { chunk: { id: string; html: string; text: string }; word: string } {
  const source = decode(name, readCorpus(name));
  const chunks = chunksOf(html);
  for (const chunk of [...chunks.slice(1), chunks[0]]) {
    if (!chunk.html.startsWith("<p ")) continue;
    const words = chunk.text.match(/\p{L}{5,}/gu) ?? [];
    const word = words.find((w) => source.split(w).length === 2 && html.split(w).length === 2);
    if (word) return { chunk, word };
  }
  throw new Error(`${name}: no paragraph with a word of its own`);
}

/**
 * Asserts that `after` differs from `source` in one place only: one run of changed lines, whose
 * removed lines all belong to the source block holding `word` (its blank-line-delimited
 * paragraph) and whose added lines carry `marker`.
 */
function expectOnlyBlockChanged(source: string, after: string, word: string, marker: string): void {
  const block = source.split(/\r?\n[ \t]*\r?\n/).find((p) => p.includes(word));
  expect(block).toBeDefined();
  const parts = diffLines(source, after);
  const runs = parts.filter((p, i) => (p.added || p.removed) && !(parts[i - 1]?.added || parts[i - 1]?.removed));
  expect(runs).toHaveLength(1);
  const lines = (p: { value: string }) => p.value.split(/\r?\n/).filter((l) => l.trim() !== "");
  const removed = parts.filter((p) => p.removed).flatMap(lines);
  const added = parts.filter((p) => p.added).flatMap(lines);
  for (const line of removed) expect(block).toContain(line);
  expect(added.join("\n")).toContain(marker);
}

describe.each(FIXTURES)("$name", ({ name, format }) => {
  it("exports byte-identical when untouched, and as itself after a save of an unchanged document", async () => {
    const doc = await upload(name);
    expect((await exportBytes(doc.sessionId, format)).equals(readCorpus(name))).toBe(true);
    const saved = await stack.call("POST", `/v1/sessions/${doc.sessionId}/documents/${doc.slotId}/save`, {
      key,
      body: { html: doc.html },
    });
    expect(saved.status).toBe(200);
    expect((await exportBytes(doc.sessionId, format)).equals(readCorpus(name))).toBe(true);
  });

  it("a save that edits one block changes only that block's lines", async () => {
    const doc = await upload(name);
    const { chunk, word } = pickBlock(name, doc.html);
    const edited = chunk.html.replace(/^(<p [^>]*>)/, "$1SAVED-EDIT ");
    const res = await stack.call("POST", `/v1/sessions/${doc.sessionId}/documents/${doc.slotId}/save`, {
      key,
      body: { html: doc.html.replace(chunk.html, edited) },
    });
    expect(res.status).toBe(200);
    const source = readCorpus(name);
    const out = await exportBytes(doc.sessionId, format);
    expect(out.equals(source)).toBe(false);
    expectOnlyBlockChanged(decode(name, source), decode(name, out), word, "SAVED-EDIT");
  });

  it("an AI edit of one block (offline engine) changes only that block's lines", async () => {
    const doc = await upload(name);
    const { word } = pickBlock(name, doc.html);
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { session_id: doc.sessionId, message: `replace "${word}" with "AIEDIT"` },
    });
    expect(res.status).toBe(200);
    const reply = (await res.json()) as { document_changes?: { chunk_diffs: unknown[] } };
    expect(reply.document_changes?.chunk_diffs).toHaveLength(1);
    const source = readCorpus(name);
    const out = await exportBytes(doc.sessionId, format);
    expectOnlyBlockChanged(decode(name, source), decode(name, out), word, "AIEDIT");
  });
});

describe("documents loaded through chat and pre-signed uploads", () => {
  it("a chat turn that loads a .md upload and edits it exports only that block changed", async () => {
    const name = "md/tika-testMARKDOWN.md";
    const bytes = readCorpus(name);
    const first = await upload(name);
    const { word } = pickBlock(name, first.html);
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: {
        message: `replace "${word}" with "CHATEDIT"`,
        upload_document_base64: { filename: "notes.md", file_base64: bytes.toString("base64") },
      },
    });
    expect(res.status).toBe(200);
    const { session_id: sessionId } = (await res.json()) as { session_id: string };
    const out = (await exportBytes(sessionId, "markdown")).toString("utf8");
    const changed = changedLines(bytes.toString("utf8"), out);
    expect(changed.length).toBe(2);
    expect(changed[1]).toContain("CHATEDIT");
    expect(changed[0].replace(word, "CHATEDIT")).toBe(changed[1]);
  });

  it("pre-signed and base64 uploads into a session keep the original; a convert-only upload keeps none", async () => {
    const name = "txt/snappy-alice29.txt";
    const bytes = readCorpus(name);
    const created = await stack.call("POST", "/v1/uploads", {
      key,
      body: { filename: "alice.txt", content_type: "text/plain", size_bytes: bytes.length, purpose: "document" },
    });
    const slot = (await created.json()) as { upload_id: string; upload_url: string };
    expect((await fetch(slot.upload_url, { method: "PUT", body: new Uint8Array(bytes) })).status).toBe(200);
    const processed = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, {
      key,
      body: { session_id: "presigned-lossless" },
    });
    expect(processed.status).toBe(200);
    expect((await exportBytes("presigned-lossless", "txt")).equals(bytes)).toBe(true);

    const viaBase64 = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: { filename: "alice.txt", file_base64: bytes.toString("base64"), session_id: "base64-lossless" },
    });
    expect(viaBase64.status).toBe(200);
    expect((await exportBytes("base64-lossless", "txt")).equals(bytes)).toBe(true);

    const before = await ingestDb("document_sources").count<{ count: string }[]>("* as count");
    const convertOnly = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: { filename: "alice.txt", file_base64: bytes.toString("base64") },
    });
    expect(convertOnly.status).toBe(200);
    expect(((await convertOnly.json()) as { html: string }).html).not.toContain("data-chunk-id");
    const after = await ingestDb("document_sources").count<{ count: string }[]>("* as count");
    expect(Number(after[0].count)).toBe(Number(before[0].count));
  });

  it("a .md exported as docx or html is generated; another format than the original never gets its bytes", async () => {
    const doc = await upload("md/tika-testMARKDOWN.md");
    const docx = await exportBytes(doc.sessionId, "docx");
    expect(docx.subarray(0, 2).toString("latin1")).toBe("PK");
    const txt = await exportBytes(doc.sessionId, "txt");
    expect(txt.equals(readCorpus("md/tika-testMARKDOWN.md"))).toBe(false);
  });

  it("a document created in Redline (no original) keeps the generated export", async () => {
    // An HTML upload has no original kept: its export is generated as before issue #12.
    const res = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes: Buffer.from("<h1>T</h1><ul><li>a</li></ul>"), filename: "page.html" },
    });
    expect(res.status).toBe(200);
    const { session_id: sessionId } = (await res.json()) as { session_id: string };
    expect((await exportBytes(sessionId, "markdown")).toString("utf8")).toBe("# T\n\n-   a\n");
  });
});

describe("stored originals are the owner's alone", () => {
  it("keeps the original under the owner's prefix; another tenant's export never reads it", async () => {
    const name = "txt/tika-testTXTNonASCIIUTF8.txt";
    const doc = await upload(name);
    const rows = await ingestDb("document_sources").select("id", "owner_id", "object_key", "format");
    const mine = rows.filter((r) => r.format === "txt");
    expect(mine.length).toBeGreaterThan(0);
    for (const row of rows)
      expect(row.object_key.startsWith(`sources/${encodeURIComponent(row.owner_id)}/`)).toBe(true);
    // The documents service names the source on the document.
    const [stored] = await stack
      .documentsDb("documents")
      .whereNotNull("source_id")
      .orderBy("created_at", "desc")
      .limit(1);
    expect(stored.source_format).toBeDefined();

    // Another tenant exporting their own document is never given this one's original, even with
    // the same file content: their document names their own source.
    const other = await stack.createKey("mallory");
    const theirs = await upload(name, other);
    const theirRows = await ingestDb("document_sources").select("owner_id").distinct();
    expect(theirRows.length).toBeGreaterThanOrEqual(2);
    expect((await exportBytes(theirs.sessionId, "txt", other)).equals(readCorpus(name))).toBe(true);
    // Mallory cannot reach Lena's session (and so neither her document nor its original).
    const denied = await stack.call("POST", "/v1/documents/export", {
      key: other,
      body: { session_id: doc.sessionId, format: "txt" },
    });
    expect([403, 404]).toContain(denied.status);

    // Even handed Lena's source id directly (as a forged internal call would be), ingest answers
    // Mallory's export from the HTML alone: the original is looked up under the caller's owner.
    // The same call as Lena gets her original back, so the refusal is what makes the difference.
    const md = await upload("md/tika-testMARKDOWN.md");
    const [lenaSource] = await ingestDb("document_sources")
      .where({ format: "markdown" })
      .orderBy("created_at", "desc")
      .limit(1);
    const loaded = Object.fromEntries(chunksOf(md.html).map((c) => [c.id, c.html]));
    const request = {
      html: md.html,
      format: "markdown",
      title: "x",
      source: { source: { sourceId: lenaSource.id as string, format: "markdown" }, loaded },
    };
    const files = createRpcClient(ingestFilesV1.FilesServiceService, stack.addrs.ingest);
    const as = async (k: string) => (await stack.accounts.resolveApiKey({ apiKey: k })).principal;
    try {
      const original = readCorpus("md/tika-testMARKDOWN.md");
      const hers = await files.exportDocument(request, { principal: await as(key) });
      expect(Buffer.from(hers.content).equals(original)).toBe(true);
      const forged = await files.exportDocument(request, { principal: await as(other) });
      expect(Buffer.from(forged.content).equals(original)).toBe(false);
      expect(Buffer.from(forged.content).toString("utf8")).toContain("# ");
    } finally {
      files.close();
    }
  });
});
