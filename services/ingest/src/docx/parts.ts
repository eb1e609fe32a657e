// The out-of-flow parts of a docx that mammoth leaves out: headers, footers and comments. Each
// becomes its own block marked `data-part` (docs/ARCHITECTURE.md, "Out-of-flow parts"), so it is
// a chunk the documents service stores and exporters put back, and is never inlined into the
// text. Headers and footers keep their paragraphs with bold/italic/underline; tabs and table
// cells become separators; fields (page numbers) keep their cached result.

import { escapeHtml } from "../html/util.js";
import { commentAnchors } from "./comments.js";
import { HIDDEN_SPAN_OPEN, isHiddenRun } from "./hidden.js";
import { decodeXml } from "./xml.js";
import type { CheckedZip } from "./zip-guard.js";

/** One extracted part: its kind, Word's variant (default/first/even) and its HTML paragraphs. */
export interface DocxPart {
  part: "header" | "footer" | "comment";
  variant: string;
  paragraphs: string[];
  author?: string;
  commentId?: string;
  /** The text the comment is anchored to in the body (comments only). */
  anchor?: string;
}

const REL = /<Relationship\b[^>]*>/g;

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\s(?:[\\w.-]+:)?${name}\\s*=\\s*"([^"]*)"`).exec(tag)?.[1];
}

/**
 * The HTML of one w:p: runs with b/i/u, tabs as a wide space, deleted text left out (changes
 * accepted), hidden (w:vanish) runs as hidden spans.
 */
export function paragraphHtml(pXml: string): string {
  // Tracked deletions are history: accepted changes drop them.
  const xml = pXml.replace(/<w:del\b[\s\S]*?<\/w:del>/g, "").replace(/<w:delText\b[^>]*>[\s\S]*?<\/w:delText>/g, "");
  const out: string[] = [];
  for (const run of xml.match(/<w:r\b[\s\S]*?<\/w:r>/g) ?? []) {
    const props = /<w:rPr>([\s\S]*?)<\/w:rPr>/.exec(run)?.[1] ?? "";
    const on = (name: string) => new RegExp(`<w:${name}(?:\\s+w:val="(?:true|1|on)")?\\s*/>`).test(props);
    let text = "";
    for (const piece of run.match(/<w:t\b[^>]*>[\s\S]*?<\/w:t>|<w:(?:tab|ptab)\b[^>]*\/>|<w:br\b[^>]*\/>/g) ?? []) {
      if (piece.startsWith("<w:t")) text += escapeHtml(decodeXml(piece.replace(/<[^>]+>/g, "")));
      else if (piece.startsWith("<w:br")) text += "<br>";
      else text += "\u2003";
    }
    if (!text) continue;
    if (on("u") || /<w:u\s+w:val="(?!none)[^"]*"/.test(props)) text = `<u>${text}</u>`;
    if (on("i")) text = `<em>${text}</em>`;
    if (on("b")) text = `<strong>${text}</strong>`;
    if (isHiddenRun(props)) text = `${HIDDEN_SPAN_OPEN}${text}</span>`;
    out.push(text);
  }
  return out.join("").trim();
}

/** The non-empty paragraphs of a part (table cells are flattened into their paragraphs). */
function partParagraphs(xml: string): string[] {
  return (xml.match(/<w:p\b[\s\S]*?<\/w:p>/g) ?? [])
    .map(paragraphHtml)
    .filter((p) => p.replace(/\u2003/g, "").trim() !== "");
}

/**
 * Headers and footers referenced by the document's sections (each part once, in the order of
 * the body-level section) and the comments, from an already checked zip.
 */
export function docxParts(zip: CheckedZip, mainPart: string, documentXml: string): DocxPart[] {
  const dir = mainPart.includes("/") ? mainPart.slice(0, mainPart.lastIndexOf("/") + 1) : "";
  const relsName = `${dir}_rels/${mainPart.slice(dir.length)}.rels`;
  const rels = zip.read(relsName)?.toString("utf8") ?? "";
  const targets = new Map<string, string>();
  for (const rel of rels.match(REL) ?? []) {
    const id = attr(rel, "Id");
    const target = attr(rel, "Target");
    if (id && target && !/TargetMode="External"/.test(rel))
      targets.set(id, target.startsWith("/") ? target.slice(1) : dir + target);
  }
  const parts: DocxPart[] = [];
  const seen = new Set<string>();
  for (const ref of documentXml.match(/<w:(?:headerReference|footerReference)\b[^>]*>/g) ?? []) {
    const kind = ref.startsWith("<w:header") ? "header" : "footer";
    const target = targets.get(attr(ref, "id") ?? "");
    if (!target || seen.has(target)) continue;
    seen.add(target);
    const xml = zip.read(target)?.toString("utf8");
    if (!xml) continue;
    const paragraphs = partParagraphs(xml);
    if (paragraphs.length > 0) parts.push({ part: kind, variant: attr(ref, "type") ?? "default", paragraphs });
  }
  const commentsTarget = [...(rels.match(REL) ?? [])]
    .filter((rel) => /\/relationships\/comments"/.test(rel))
    .map((rel) => attr(rel, "Target"))[0];
  const commentsXml = commentsTarget ? zip.read(dir + commentsTarget)?.toString("utf8") : undefined;
  const anchors = commentsXml ? commentAnchors(documentXml) : new Map<string, string>();
  for (const comment of commentsXml?.match(/<w:comment\b[\s\S]*?<\/w:comment>/g) ?? []) {
    const open = /<w:comment\b[^>]*>/.exec(comment)?.[0] ?? "";
    const paragraphs = partParagraphs(comment);
    if (paragraphs.length === 0) continue;
    parts.push({
      part: "comment",
      variant: "comment",
      paragraphs,
      author: decodeXml(attr(open, "author") ?? ""),
      commentId: attr(open, "id") ?? "",
      anchor: anchors.get(attr(open, "id") ?? "") ?? "",
    });
  }
  return parts;
}

/** One block per part: `<p data-part="header" data-variant="default">…</p>` (comments carry id and author). */
export function partsToHtml(parts: DocxPart[]): { before: string; after: string } {
  const block = (p: DocxPart) => {
    const extra =
      p.part === "comment"
        ? ` data-comment-id="${escapeHtml(p.commentId ?? "")}" data-author="${escapeHtml(p.author ?? "")}"${p.anchor ? ` data-anchor="${escapeHtml(p.anchor)}"` : ""}`
        : ` data-variant="${escapeHtml(p.variant)}"`;
    return `<p data-part="${p.part}"${extra}>${p.paragraphs.join("<br>")}</p>`;
  };
  return {
    before: parts
      .filter((p) => p.part === "header")
      .map(block)
      .join(""),
    after: parts
      .filter((p) => p.part !== "header")
      .map(block)
      .join(""),
  };
}
