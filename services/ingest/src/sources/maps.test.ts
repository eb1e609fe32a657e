import { chunkHtml } from "@redline/html-chunks";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { convertInProcess } from "../convert-in-process.js";
import { buildExport } from "../export/export-worker.js";
import { DEFAULT_LIMITS, type DocumentFormat } from "../formats.js";
import { spliceText } from "./splice.js";
import type { DocumentSource } from "./types.js";

const layout = {
  widthIn: 8.5,
  heightIn: 11,
  orientation: "portrait" as const,
  margins: { top: 1, right: 1, bottom: 1, left: 1 },
  paperName: "Letter" as const,
};

async function load(bytes: Buffer, format: DocumentFormat, name: string) {
  const converted = await convertInProcess(format, name, bytes, DEFAULT_LIMITS, { keepSource: true });
  const map = converted.source?.map;
  if (!map) throw new Error("no map");
  const stored = chunkHtml(converted.html, { parts: "drop" }).chunks;
  const doc: DocumentSource = {
    format: map.format,
    bytes,
    map,
    loaded: Object.fromEntries(stored.map((c) => [c.chunkId, c.html])),
  };
  return { stored, doc, converted };
}

const spanText = (doc: DocumentSource, id: string, encoding = "utf8") => {
  const span = doc.map.chunks[id];
  if (span.kind !== "bytes") throw new Error("bytes span expected");
  return iconv.decode(doc.bytes.subarray(span.start, span.end), encoding);
};

async function exportTxt(html: string, source: DocumentSource, format: "txt" | "markdown" = "txt") {
  const built = await buildExport({
    kind: "export-build",
    html,
    sanitized: false,
    maxElements: 1000,
    format,
    title: "t",
    layout,
    embedImages: false,
    images: [],
    source,
  });
  if (built.kind !== "file") throw new Error("not a file");
  return Buffer.from(built.bytes);
}

describe("source maps", () => {
  it("markdown: byte ranges of each block in a BOM, CRLF, multibyte file with front matter", async () => {
    const text =
      "---\r\ntitle: x\r\n---\r\n# Überschrift\r\n\r\nCafé — “quoted”\r\nsecond line\r\n\r\n[ref]: https://example.com\r\n\r\n- a\r\n- b\r\n";
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]);
    const { stored, doc, converted } = await load(bytes, "md", "x.md");
    expect(converted.html).toContain('data-chunk-id="');
    expect(stored.map((c) => spanText(doc, c.chunkId))).toEqual([
      "# Überschrift",
      "Café — “quoted”\r\nsecond line",
      "- a\r\n- b",
    ]);
    // The same file converts to the same ids (seeded by its bytes): an agent job rerun edits them.
    const again = await load(bytes, "md", "x.md");
    expect(again.stored.map((c) => c.chunkId)).toEqual(stored.map((c) => c.chunkId));
    // Ids an author typed are never kept.
    const typed = await load(Buffer.from('<p data-chunk-id="c_mine">x</p>\n'), "md", "y.md");
    expect(typed.stored[0].chunkId).not.toBe("c_mine");
  });

  it("without keep_source the HTML has no ids and no map", async () => {
    const converted = await convertInProcess("md", "x.md", Buffer.from("# A\n\nb\n"), DEFAULT_LIMITS);
    expect(converted.source).toBeUndefined();
    expect(converted.html).not.toContain("data-chunk-id");
  });

  it("text: paragraphs map from their first to last character; indentation stays between blocks", async () => {
    const bytes = Buffer.from("TITLE LINE HERE\n\n   Indented para\nline two  \n\n\nLast.\n", "utf8");
    const { stored, doc } = await load(bytes, "txt", "x.txt");
    expect(stored.map((c) => spanText(doc, c.chunkId))).toEqual([
      "TITLE LINE HERE",
      "Indented para\nline two",
      "Last.",
    ]);
    const html = stored.map((c, i) => (i === 1 ? c.html.replace(/>[\s\S]*<\/p>$/, ">Edited</p>") : c.html)).join("\n");
    expect((await exportTxt(html, doc)).toString("utf8")).toBe("TITLE LINE HERE\n\n   Edited  \n\n\nLast.\n");
  });

  it("windows-1252 text stays windows-1252: untouched bytes as they were, an edit encoded the same way", async () => {
    const bytes = iconv.encode("Première ligne\r\n\r\n“Guillemets” ici\r\n", "windows-1252");
    const { stored, doc } = await load(bytes, "txt", "x.txt");
    expect((await exportTxt(stored.map((c) => c.html).join("\n"), doc)).equals(bytes)).toBe(true);
    const html = [stored[0].html, "<p>Déjà vu<br>ligne</p>"].join("\n");
    const out = await exportTxt(html, doc);
    expect(out.equals(iconv.encode("Première ligne\r\n\r\nDéjà vu\r\nligne\r\n", "windows-1252"))).toBe(true);
    const warnings: string[] = [];
    spliceText([stored[0], { chunkId: "c_new", html: "<p>漢字</p>" }], doc, () => "漢字", warnings);
    expect(warnings.join()).toContain("windows-1252");
  });

  it("UTF-16 text keeps its BOM and encoding", async () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode("One\n\nTwo\n", "utf-16le")]);
    const { stored, doc } = await load(bytes, "txt", "x.txt");
    expect((await exportTxt(stored.map((c) => c.html).join("\n"), doc)).equals(bytes)).toBe(true);
    const out = await exportTxt([stored[0].html, "<p>Zwei</p>"].join("\n"), doc);
    expect(out.equals(Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode("One\n\nZwei\n", "utf-16le")]))).toBe(
      true,
    );
  });

  it("deleted blocks leave one separator; moved and inserted blocks are set off by a blank line", async () => {
    const bytes = Buffer.from("# A\n\none\n\ntwo\n\nthree\n", "utf8");
    const { stored, doc } = await load(bytes, "md", "x.md");
    const [a, one, two, three] = stored;
    const join = (...cs: { html: string }[]) => cs.map((c) => c.html).join("\n");
    expect((await exportTxt(join(a, two, three), doc, "markdown")).toString()).toBe("# A\n\ntwo\n\nthree\n");
    expect((await exportTxt(join(a, three, one), doc, "markdown")).toString()).toBe("# A\n\nthree\n\none\n");
    expect((await exportTxt(join(a, { html: "<p>new</p>" }, one, two, three), doc, "markdown")).toString()).toBe(
      "# A\n\nnew\n\none\n\ntwo\n\nthree\n",
    );
  });

  it("a document none of whose chunks come from the original is generated", async () => {
    const bytes = Buffer.from("one\n\ntwo\n", "utf8");
    const { doc } = await load(bytes, "txt", "x.txt");
    expect((await exportTxt("<p>other</p>", doc)).toString("utf8")).toBe("other\n");
  });
});
