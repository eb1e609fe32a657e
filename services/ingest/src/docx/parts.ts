// The out-of-flow parts of a docx that mammoth leaves out: headers, footers and comments. Each
// becomes its own block marked `data-part` (docs/ARCHITECTURE.md, "Out-of-flow parts"), so it is
// a chunk the documents service stores and exporters put back, and is never inlined into the
// text. Headers and footers keep their paragraphs with bold/italic/underline; tabs and table
// cells become separators; fields (page numbers) keep their cached result.

import { escapeHtml } from "../html/util.js";
import { commentAnchors } from "./comments.js";
import { HIDDEN_SPAN_OPEN, isHiddenRun } from "./hidden.js";
import { symbolFontOf, symbolText } from "./symbol-fonts.js";
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

// Pictures a browser shows (and the sanitizer keeps as data: URLs); EMF/WMF are not among them.
const WEB_IMAGE = /\.(png|jpe?g|gif|webp)$/i;
const MEDIA_TYPE: Record<string, string> = { png: "png", jpg: "jpeg", jpeg: "jpeg", gif: "gif", webp: "webp" };

/** True when a relationship target is a picture a browser shows (by its extension). */
export function isWebImage(target: string): boolean {
  return WEB_IMAGE.test(target);
}

/**
 * The pictures of a run: relationship id of each DrawingML blip (`r:embed`) or VML image
 * (`v:imagedata r:id`) and its alt text, the VML fallback of a DrawingML picture left out.
 */
export function runPictures(run: string): { rid: string; alt: string }[] {
  const xml = run.replace(/<mc:Fallback\b[\s\S]*?<\/mc:Fallback>/g, "");
  const alt = decodeXml(/<wp:docPr\b[^>]*\bdescr="([^"]*)"/.exec(xml)?.[1] ?? "");
  return [...xml.matchAll(/<(?:a:blip\b[^>]*\br:embed|v:imagedata\b[^>]*\br:id)="([^"]+)"/g)].map((m) => ({
    rid: m[1],
    alt,
  }));
}

/** Resolves a picture's relationship id to the `src` of its `<img>` (null: not shown). */
export type PictureSource = (rid: string) => string | null;

/**
 * The HTML of one w:p: runs with b/i/u, tabs as a wide space, pictures `picture` resolves as
 * `<img>`, deleted text left out (changes accepted), hidden (w:vanish) runs as hidden spans.
 */
export function paragraphHtml(pXml: string, picture?: PictureSource): string {
  // Tracked deletions are history: accepted changes drop them.
  const xml = pXml.replace(/<w:del\b[\s\S]*?<\/w:del>/g, "").replace(/<w:delText\b[^>]*>[\s\S]*?<\/w:delText>/g, "");
  const out: string[] = [];
  for (const run of xml.match(/<w:r\b[\s\S]*?<\/w:r>/g) ?? []) {
    if (picture && /<w:(?:drawing|pict)\b/.test(run)) {
      for (const { rid, alt } of runPictures(run)) {
        const src = picture(rid);
        if (src) out.push(`<img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}">`);
      }
      continue;
    }
    const props = /<w:rPr>([\s\S]*?)<\/w:rPr>/.exec(run)?.[1] ?? "";
    const on = (name: string) => new RegExp(`<w:${name}(?:\\s+w:val="(?:true|1|on)")?\\s*/>`).test(props);
    // Glyph codes of a symbol font are read as the characters they show (symbol-fonts.ts).
    const font = symbolFontOf(props);
    const decode = (t: string) => (font ? symbolText(decodeXml(t), font, { count: 0 }) : decodeXml(t));
    let text = "";
    for (const piece of run.match(/<w:t\b[^>]*>[\s\S]*?<\/w:t>|<w:(?:tab|ptab)\b[^>]*\/>|<w:br\b[^>]*\/>/g) ?? []) {
      if (piece.startsWith("<w:t")) text += escapeHtml(decode(piece.replace(/<[^>]+>/g, "")));
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
function partParagraphs(xml: string, picture?: PictureSource): string[] {
  return (xml.match(/<w:p\b[\s\S]*?<\/w:p>/g) ?? [])
    .map((p) => paragraphHtml(p, picture))
    .filter((p) => p.replace(/\u2003/g, "").trim() !== "");
}

/** Relationship id → target of a part's relationships (internal targets resolved from the part's folder). */
function relTargets(rels: string, dir: string): Map<string, string> {
  const targets = new Map<string, string>();
  for (const rel of rels.match(REL) ?? []) {
    const id = attr(rel, "Id");
    const target = attr(rel, "Target");
    if (id && target && !/TargetMode="External"/.test(rel))
      targets.set(id, target.startsWith("/") ? target.slice(1) : dir + target);
  }
  return targets;
}

/** The pictures of part `partName` as data: URLs (web formats only; an external or missing one is not shown). */
function partPictures(zip: CheckedZip, partName: string): PictureSource {
  const dir = partName.includes("/") ? partName.slice(0, partName.lastIndexOf("/") + 1) : "";
  const rels = zip.read(`${dir}_rels/${partName.slice(dir.length)}.rels`)?.toString("utf8") ?? "";
  const targets = relTargets(rels, dir);
  return (rid) => {
    const target = targets.get(rid);
    if (!target || !isWebImage(target)) return null;
    const bytes = zip.read(target.replace(/\/[^/]+\/\.\.\//g, "/"));
    const ext = /\.(\w+)$/.exec(target)?.[1].toLowerCase() ?? "";
    return bytes ? `data:image/${MEDIA_TYPE[ext]};base64,${bytes.toString("base64")}` : null;
  };
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
    const paragraphs = partParagraphs(xml, partPictures(zip, target));
    if (paragraphs.length > 0) parts.push({ part: kind, variant: attr(ref, "type") ?? "default", paragraphs });
  }
  const commentsTarget = [...(rels.match(REL) ?? [])]
    .filter((rel) => /\/relationships\/comments"/.test(rel))
    .map((rel) => attr(rel, "Target"))[0];
  const commentsXml = commentsTarget ? zip.read(dir + commentsTarget)?.toString("utf8") : undefined;
  const anchors = commentsXml ? commentAnchors(documentXml) : new Map<string, string>();
  const commentPictures = commentsTarget ? partPictures(zip, dir + commentsTarget) : undefined;
  for (const comment of commentsXml?.match(/<w:comment\b[\s\S]*?<\/w:comment>/g) ?? []) {
    const open = /<w:comment\b[^>]*>/.exec(comment)?.[0] ?? "";
    const paragraphs = partParagraphs(comment, commentPictures);
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
