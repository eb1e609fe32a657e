// Word files edited in place (issue #12), through the real stack: every .docx of the corpus that
// imports is uploaded, exported untouched (the upload itself comes back), edited by one AI edit
// (offline engine, `replace "…" with "…"` on a word only one paragraph has) and exported again.
// Every part of the package other than word/document.xml is byte-identical, and among the body's
// block-level children only the edited paragraph differs.
import { readdirSync } from "node:fs";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORPUS_DIR, readCorpus } from "./fixtures/corpus.js";
import { startStackWithKey } from "./support/file-stack.js";
import { postMultipart } from "./support/multipart.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "docx-in-place" }, "wendy"));
});
afterAll(async () => {
  await stack?.close();
});

const FIXTURES = readdirSync(`${CORPUS_DIR}/docx`).filter((f) => f.endsWith(".docx"));

/** The body's block-level children of word/document.xml (w:sectPr apart), by a depth count of tags. */
function bodyBlocks(xml: string): string[] {
  const open = /<w:body\b[^>]*>/.exec(xml);
  if (!open) return [];
  const blocks: string[] = [];
  const tag = /<(\/?)w:([\w.-]+)\b[^>]*?(\/?)>/g;
  tag.lastIndex = open.index + open[0].length;
  let depth = 0;
  let start = -1;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    if (depth === 0 && m[1] === "/") break;
    if (depth === 0) start = m.index;
    if (m[3] !== "/") depth += m[1] === "/" ? -1 : 1;
    if (depth === 0 && m[2] !== "sectPr") blocks.push(xml.slice(start, tag.lastIndex));
  }
  return blocks;
}

async function parts(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await JSZip.loadAsync(bytes);
  const out = new Map<string, Buffer>();
  for (const [name, file] of Object.entries(zip.files)) if (!file.dir) out.set(name, await file.async("nodebuffer"));
  return out;
}

async function exportDocx(sessionId: string): Promise<Buffer> {
  const res = await stack.call("POST", "/v1/documents/export", {
    key,
    body: { session_id: sessionId, format: "docx" },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const texts = (xml: string) => [...xml.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(" ");

describe.each(FIXTURES)("%s", (name) => {
  it("comes back as uploaded when untouched, and with only the AI-edited paragraph changed after one edit", async () => {
    const bytes = readCorpus(`docx/${name}`);
    const res = await postMultipart(stack, "/v1/documents/upload", key, {
      file: { bytes, filename: name },
      return_html: "true",
    });
    if (res.status !== 200) {
      // Files the importer refuses (encrypted, truncated) are a 4xx with a reason, nothing to write back.
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      return;
    }
    const { session_id: sessionId, html } = (await res.json()) as { session_id: string; html: string };
    expect((await exportDocx(sessionId)).equals(bytes)).toBe(true);

    // A word of at least 5 letters that only one paragraph has, in the HTML and the original XML.
    const original = await parts(bytes);
    const documentXml = original.get("word/document.xml")?.toString("utf8") ?? "";
    const blocks = bodyBlocks(documentXml);
    const paragraphs = [...html.matchAll(/<p data-chunk-id="[^"]+">([^<]*)<\/p>/g)].map((m) => m[1]);
    // Block texts once: a slow search between two requests can outlast the server's keep-alive.
    const blockTexts = blocks.map(texts);
    const word = paragraphs
      .flatMap((p) => p.match(/\p{L}{5,}/gu) ?? [])
      .find(
        (w) =>
          /^[A-Za-z]+$/.test(w) && html.split(w).length === 2 && blockTexts.filter((t) => t.includes(w)).length === 1,
      );
    if (!word) return; // nothing uniquely editable in a plain paragraph (tables only)
    const chat = await stack.call("POST", "/v1/chat", {
      key,
      body: { session_id: sessionId, message: `replace "${word}" with "AIEDIT"` },
    });
    expect(chat.status).toBe(200);
    const reply = (await chat.json()) as { document_changes?: { chunk_diffs: unknown[] } };
    expect(reply.document_changes?.chunk_diffs).toHaveLength(1);

    const out = await parts(await exportDocx(sessionId));
    const changed = [...new Set([...original.keys(), ...out.keys()])].filter((n) => {
      const a = original.get(n);
      const b = out.get(n);
      return !a || !b || !a.equals(b);
    });
    expect(changed).toEqual(["word/document.xml"]);
    const after = bodyBlocks(out.get("word/document.xml")?.toString("utf8") ?? "");
    expect(after).toHaveLength(blocks.length);
    const differing = blocks.flatMap((b, i) => (b === after[i] ? [] : [i]));
    expect(differing).toHaveLength(1);
    expect(texts(blocks[differing[0]])).toContain(word);
    expect(texts(after[differing[0]])).toContain("AIEDIT");
    expect(texts(after[differing[0]])).not.toContain(word);
  });
});
