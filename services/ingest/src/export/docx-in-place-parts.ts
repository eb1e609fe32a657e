// Export to .docx in place (docx-in-place.ts): the out-of-flow parts. A changed header or footer
// rewrites the text paragraphs of its part, a changed comment those of its entry in the comments
// part; a removed comment's anchors leave the body (dropOrphanAnchors, docx-in-place-body.ts).
import { partOf } from "@redline/html-chunks";
import { paragraphHtml } from "../docx/parts.js";
import type { DocumentSource } from "../sources/types.js";
import { type Chunk, type ParaSpec, partLines, type Untouched } from "./docx-in-place-html.js";
import type { InPlacePackage } from "./docx-in-place-package.js";
import { rewriteTextParagraphs, shownPicture } from "./docx-in-place-writer.js";
import { PartRels } from "./docx-package.js";

interface PartRef {
  kind: "header" | "footer";
  target: string;
}

/** Headers and footers in the order the converter made their chunks (docx/parts.ts). */
async function partRefs(
  doc: InPlacePackage,
  documentXml: string,
  rels: Map<string, { target: string; type: string }>,
  files: Map<string, string>,
): Promise<PartRef[]> {
  const out: PartRef[] = [];
  const seen = new Set<string>();
  for (const ref of documentXml.match(/<w:(?:headerReference|footerReference)\b[^>]*>/g) ?? []) {
    const id = /\sr:id="([^"]*)"/.exec(ref)?.[1];
    const target = id ? rels.get(id)?.target : undefined;
    if (!target || seen.has(target)) continue;
    seen.add(target);
    const xml = files.get(target);
    if (!xml) continue;
    const picture = shownPicture(await PartRels.of(doc.zip, target));
    const hasText = (xml.match(/<w:p\b[\s\S]*?<\/w:p>/g) ?? []).some(
      (p) =>
        paragraphHtml(p, picture)
          .replace(/\u2003/g, "")
          .trim() !== "",
    );
    if (hasText) out.push({ kind: ref.startsWith("<w:header") ? "header" : "footer", target });
  }
  return out;
}

/** Rewrites the header and footer parts whose chunk changed or was removed (its part then keeps no text). */
export async function writeHeadersAndFooters(
  doc: InPlacePackage,
  chunks: Chunk[],
  source: DocumentSource,
  untouched: Untouched,
): Promise<void> {
  const files = new Map<string, string>();
  const partChunks = chunks.filter((c) => partOf(c.html) === "header" || partOf(c.html) === "footer");
  const loadedParts = Object.entries(source.loaded).filter(([, h]) => partOf(h) === "header" || partOf(h) === "footer");
  if (loadedParts.length === 0) return;
  for (const rel of doc.rels.values()) {
    if (/\/(header|footer)$/.test(rel.type)) {
      const xml = await doc.read(rel.target);
      if (xml !== undefined) files.set(rel.target, xml);
    }
  }
  const refs = await partRefs(doc, doc.documentXml, doc.rels, files);
  const rewrites: { target: string; xml: string; lines: ParaSpec[] }[] = [];
  for (const kind of ["header", "footer"] as const) {
    const ofKind = loadedParts.filter(([, h]) => partOf(h) === kind);
    const targets = refs.filter((r) => r.kind === kind);
    ofKind.forEach(([id], i) => {
      const target = targets[i]?.target;
      const now = partChunks.find((c) => c.chunkId === id);
      if (!target || (now && untouched(id, now.html))) return;
      const xml = files.get(target) as string;
      const lines = now ? partLines(now.html) : [{ kind: "p" as const, segments: [] }];
      rewrites.push({ target, xml, lines });
    });
  }
  for (const { target, xml, lines } of rewrites) {
    const written = await doc.inPart(target, () =>
      rewriteTextParagraphs(xml, xml.indexOf("<w:", xml.indexOf("?>") + 1), lines, doc.writer),
    );
    doc.zip.file(target, written);
    doc.rewrittenParts++;
  }
}

/**
 * Rewrites the entries of the comments whose chunk changed. Returns the Word ids of the comments
 * whose chunk was removed: their anchors leave the body.
 */
export async function writeComments(
  doc: InPlacePackage,
  chunks: Chunk[],
  source: DocumentSource,
  untouched: Untouched,
): Promise<Set<string>> {
  const removedComments = new Set<string>();
  const commentChunks = new Map(chunks.filter((c) => partOf(c.html) === "comment").map((c) => [c.chunkId, c.html]));
  const changedComments = new Map<string, string>();
  for (const [id, loaded] of Object.entries(source.loaded)) {
    if (partOf(loaded) !== "comment") continue;
    const commentId = /\sdata-comment-id="([^"]*)"/.exec(loaded)?.[1];
    if (commentId === undefined) continue;
    const now = commentChunks.get(id);
    if (now === undefined) removedComments.add(commentId);
    else if (!untouched(id, now)) changedComments.set(commentId, now);
  }
  if (changedComments.size === 0) return removedComments;
  const target = [...doc.rels.values()].find((r) => /\/comments$/.test(r.type))?.target;
  const original = target ? await doc.read(target) : undefined;
  if (!target || original === undefined) return removedComments;
  const written = await doc.inPart(target, () => {
    let xml = original;
    for (const [commentId, now] of changedComments) {
      const at = new RegExp(`<w:comment\\b[^>]*w:id="${commentId.replace(/[^\w-]/g, "")}"`).exec(xml)?.index;
      if (at === undefined) continue;
      xml = rewriteTextParagraphs(xml, at, partLines(now), doc.writer);
    }
    return xml;
  });
  doc.zip.file(target, written);
  doc.rewrittenParts++;
  return removedComments;
}
