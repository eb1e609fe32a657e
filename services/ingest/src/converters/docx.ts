// Word .docx → HTML with mammoth, after the container has been sniffed and its zip directory
// checked (encrypted OOXML, truncated zips and zip bombs never reach mammoth).
import { InputError } from "@redline/service-kit";
import mammoth from "mammoth";
import { fenceHiddenXml, hiddenSpans } from "../docx/hidden.js";
import { markNotes } from "../docx/notes.js";
import { docxPageSetup } from "../docx/page-setup.js";
import { tagParagraphs } from "../docx/paragraph-tags.js";
import { docxParts, partsToHtml } from "../docx/parts.js";
import { mapChunks, tagBodyBlocks, withMainPart } from "../docx/source-map.js";
import { mapSymbolRuns } from "../docx/symbol-fonts.js";
import { checkZip } from "../docx/zip-guard.js";
import { baseTitle, type ConvertLimits, type ConvertOptions, type ConvertResult } from "../formats.js";
import { firstHeadingText } from "../html/util.js";
import { applyParagraphInfo } from "./docx-paragraphs.js";

// Added to mammoth's default map (which already maps Heading 1-6 to h1-h6, keeps bold, italic,
// strikethrough, sub/superscript, links, lists, tables with spans, footnotes and endnotes).
const STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => p:fresh",
  "p[style-name='Quote'] => blockquote > p:fresh",
  "p[style-name='Intense Quote'] => blockquote > p:fresh",
  // mammoth drops underline by default (it reads as a link on the web); documents keep it.
  "u => u",
  "strike => s",
  // Hidden text of our own exports carries this style (export/hidden-text.ts); docx/hidden.ts marks it.
  "r[style-name='Redline Hidden'] => ",
];

const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ENCRYPTED_PACKAGE = Buffer.from("EncryptedPackage", "utf16le");
const MAX_WARNINGS = 20;

/**
 * Refuses containers that are not a plain OOXML zip, with a message that tells the user
 * what the file really is. Word saves password-protected .docx files as an OLE compound file
 * holding an "EncryptedPackage" stream.
 */
function sniffContainer(bytes: Buffer): void {
  if (bytes.subarray(0, 8).equals(CFB_MAGIC)) {
    if (bytes.includes(ENCRYPTED_PACKAGE)) {
      throw new InputError(
        "The .docx file is encrypted/password-protected; remove the password in Word (File > Info > Protect Document) and upload again",
      );
    }
    throw new InputError(
      "The file is a Word 97-2003 (.doc) document with a .docx name; open it in Word, save it as .docx and upload again",
    );
  }
  const head = bytes.subarray(0, 8).toString("latin1");
  if (head.startsWith("%PDF"))
    throw new InputError("The file named .docx is a PDF; rename it to .pdf and upload again");
  if (head.startsWith("{\\rtf"))
    throw new InputError("The file named .docx is an RTF document; rename it to .rtf and upload again");
  if (!head.startsWith("PK")) throw new InputError("The .docx file is not a Word document (it is not a zip container)");
}

/** The main document part named by the package relationships (Transitional or Strict). */
function mainPartName(rels: string | null): string {
  const rel = rels?.match(/<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/)?.[0];
  const target = rel?.match(/Target="([^"]+)"/)?.[1];
  return target ? target.replace(/^\//, "") : "word/document.xml";
}

/** Folds mammoth's messages into a short list: one line per kind of loss. */
function summarizeMessages(messages: { type: string; message: string }[]): string[] {
  const styles = new Set<string>();
  const elements = new Set<string>();
  const other = new Set<string>();
  for (const { message } of messages) {
    const style = /^Unrecognised (?:paragraph|run|table) style: '([^']*)'/.exec(message);
    const element = /^An unrecognised element was ignored: (.*)$/.exec(message);
    if (style) styles.add(style[1]);
    else if (element) elements.add(element[1]);
    else other.add(message);
  }
  const out = [...other];
  if (styles.size > 0) {
    out.push(
      `Styles without an HTML equivalent became plain text (formatting of ${[...styles].slice(0, 8).join(", ")}${styles.size > 8 ? ", ..." : ""})`,
    );
  }
  if (elements.size > 0) {
    out.push(
      `Some drawing or layout elements were ignored (${[...elements].slice(0, 8).join(", ")}${elements.size > 8 ? ", ..." : ""})`,
    );
  }
  return out;
}

/**
 * Converts a .docx to HTML: headings (Title → h1, Heading 1-6 → h1-h6), bold, italic,
 * underline (`u`), strikethrough (`s`), sub/superscript, links, lists, tables (colspan/rowspan),
 * images as data: URIs, footnotes and endnotes as an ordered list at the end (`data-part`
 * footnote/endnote); headers, footers and comments as out-of-flow `data-part` blocks (headers
 * first, footers and comments last); tracked changes accepted. Page setup comes
 * from the final w:sectPr. Throws InputError for encrypted, legacy, damaged or oversized
 * (zip bomb) files, checked against `limits` before mammoth unzips anything. With
 * `opts.keepSource` the HTML is chunked (ids as stored) and `source.map` gives each in-flow
 * chunk's body blocks (docx/source-map.ts).
 */
export async function convertDocx(
  bytes: Buffer,
  filename: string,
  limits: ConvertLimits,
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  sniffContainer(bytes);
  const zip = checkZip(
    bytes,
    {
      maxEntries: limits.maxZipEntries,
      maxUncompressedBytes: limits.maxUncompressedBytes,
      maxCompressionRatio: limits.maxCompressionRatio,
    },
    ".docx",
  );
  // Inflating each part once (bounded by its declared size) proves the sizes mammoth will trust.
  zip.verifyAll();

  const relsXml = zip.read("_rels/.rels")?.toString("utf8") ?? null;
  const mainPart = mainPartName(relsXml);
  const documentXml = zip.read(mainPart)?.toString("utf8");
  if (documentXml === undefined) {
    throw new InputError(
      "The .docx file has no main document part; it may be another kind of zip file renamed to .docx",
    );
  }

  // Mammoth reads a copy of the package whose main part is rewritten: with keepSource each body
  // block is tagged so chunks can be mapped back to it (edit in place), and hidden (w:vanish)
  // runs are fenced, which mammoth would show as text. A body the tagger cannot read is converted
  // as it is, without a map.
  let readXml = documentXml;
  let tagged = false;
  if (opts.keepSource) {
    try {
      readXml = tagBodyBlocks(documentXml);
      tagged = true;
    } catch {
      tagged = false;
    }
  }
  const fenced = fenceHiddenXml(zip, readXml);
  const hidden = fenced !== null;
  if (fenced !== null) readXml = fenced;
  // Symbol-font glyph codes read as the Unicode characters they show.
  const unmappedSymbols = { count: 0 };
  readXml = mapSymbolRuns(readXml, unmappedSymbols);
  // List numbers, alignment and indentation: each paragraph that has them is tagged for the HTML.
  const tags = tagParagraphs(
    readXml,
    zip.read("word/numbering.xml")?.toString("utf8"),
    zip.read("word/styles.xml")?.toString("utf8"),
  );
  readXml = tags.xml;
  let result: { value: string; messages: { type: string; message: string }[] };
  try {
    const read = readXml === documentXml ? bytes : await withMainPart(bytes, mainPart, readXml);
    result = await mammoth.convertToHtml(
      { buffer: read },
      { styleMap: STYLE_MAP, includeDefaultStyleMap: true, externalFileAccess: false },
    );
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InputError(
      `The .docx file could not be read (${reason.slice(0, 200)}); open it in Word, save it again and upload the new file`,
    );
  }

  const warnings = summarizeMessages(result.messages);
  if (unmappedSymbols.count > 0)
    warnings.push(
      `${unmappedSymbols.count} characters of a symbol font (Symbol, Wingdings) have no Unicode equivalent and were left out`,
    );
  // Headers, footers and comments become out-of-flow parts (docx/parts.ts); a part that cannot
  // be read is a loss to report, not a reason to refuse the document.
  let parts = { before: "", after: "" };
  try {
    parts = partsToHtml(docxParts(zip, mainPart, documentXml));
  } catch {
    warnings.push("Headers, footers or comments could not be read and were not imported");
  }
  if (/<(?:[\w.-]+:)?(?:ins|del|moveFrom|moveTo)\s/.test(documentXml)) {
    warnings.push("Tracked changes were accepted: insertions are kept and deletions removed");
  }

  // Whitespace-only paragraphs and headings are layout, and a table whose rows were all deleted
  // (tracked changes accepted) leaves an empty shell.
  const body = applyParagraphInfo(hidden ? hiddenSpans(result.value) : result.value, tags.info)
    .replace(/<(p|h[1-6])>(?:\s|&nbsp;|\u00a0|<br\s*\/?>)*<\/\1>/g, "")
    .replace(/<table>\s*<\/table>/g, "")
    .trim();
  const joined = `${parts.before}${markNotes(body)}${parts.after}`;
  const mapped = tagged ? mapChunks(joined) : null;
  const html = mapped ? mapped.html : joined;
  return {
    html,
    ...(mapped ? { source: { map: mapped.map } } : {}),
    title: firstHeadingText(html) ?? baseTitle(filename),
    pageSetup: docxPageSetup(documentXml),
    warnings: warnings.slice(0, MAX_WARNINGS),
    format: "docx",
  };
}
