// Word comments in an exported .docx. Comments are out-of-flow chunks
// (`<p data-part="comment" data-comment-id data-author data-anchor>text<br>more</p>`, see
// docx/parts.ts); `data-anchor` is the text the comment was anchored to. A generated
// export writes them to comments.xml (through docx@9) and anchors each to the first place its
// text appears in the body (the start of the document when the text is gone); the in-place
// writer keeps the original anchors and only rewrites a changed comment's text.
import { loadHtml } from "../html/util.js";
import { childElements, decodeXml, escapeXml, runText } from "./xml.js";

/** One comment as the document carries it. */
export interface CommentChunk {
  /** The comment's id in the file it came from (not used for the written id). */
  sourceId: string;
  author: string;
  /** The text it was anchored to ("" when unknown). */
  anchor: string;
  /** Its paragraphs as HTML (the chunk's `<br>`-separated lines). */
  lines: string[];
}

/** Reads comment chunks (`data-part="comment"` HTML) into CommentChunks. */
export function readComments(partsHtml: string[]): CommentChunk[] {
  return partsHtml.map((html) => {
    const $ = loadHtml(html);
    const el = $.root().children().first();
    const inner = el.html() ?? "";
    return {
      sourceId: el.attr("data-comment-id") ?? "",
      author: el.attr("data-author") ?? "",
      anchor: el.attr("data-anchor") ?? "",
      lines: inner.split(/<br\s*\/?>/i).filter((l) => l.trim() !== ""),
    };
  });
}

/** Something to insert into a paragraph at a text offset. */
interface Marker {
  offset: number;
  xml: string;
}

/** `p` with `markers` inserted at their text offsets, splitting a run when one falls inside it. */
export function insertInParagraph(p: string, markers: Marker[]): string {
  const sorted = [...markers].sort((a, b) => a.offset - b.offset);
  const kids = childElements(p);
  const openEnd = p.indexOf(">") + 1;
  let out = p.slice(0, openEnd);
  let last = openEnd;
  let offset = 0;
  let next = 0;
  for (const kid of kids) {
    const xml = p.slice(kid.start, kid.end);
    out += p.slice(last, kid.start);
    last = kid.end;
    if (kid.name === "pPr") {
      out += xml;
      continue;
    }
    const text = kid.name === "r" ? runText(xml) : kid.name === "hyperlink" ? runText(xml) : "";
    while (next < sorted.length && sorted[next].offset <= offset) out += sorted[next++].xml;
    const single =
      kid.name === "r"
        ? /^(<w:r\b[^>]*>)(<w:rPr>[\s\S]*?<\/w:rPr>)?<w:t\b[^>]*>([^<]*)<\/w:t><\/w:r>$/.exec(xml)
        : null;
    if (single && next < sorted.length && sorted[next].offset < offset + text.length) {
      // Split a plain text run at each marker inside it.
      let from = 0;
      const piece = (to: number) => {
        if (to > from)
          out += `${single[1]}${single[2] ?? ""}<w:t xml:space="preserve">${escapeXml(text.slice(from, to))}</w:t></w:r>`;
        from = to;
      };
      while (next < sorted.length && sorted[next].offset < offset + text.length) {
        piece(sorted[next].offset - offset);
        out += sorted[next++].xml;
      }
      piece(text.length);
    } else {
      out += xml;
      // A marker inside a run that cannot be split goes after it.
      while (next < sorted.length && sorted[next].offset < offset + text.length) out += sorted[next++].xml;
    }
    offset += text.length;
  }
  while (next < sorted.length) out += sorted[next++].xml;
  return out + p.slice(last);
}

/** The commentRangeStart/End and reference run of comment `id`, placed around `[from, to)`. */
export function commentMarkers(id: number, from: number, to: number): Marker[] {
  return [
    { offset: from, xml: `<w:commentRangeStart w:id="${id}"/>` },
    {
      offset: to,
      xml: `<w:commentRangeEnd w:id="${id}"/><w:r><w:rPr><w:rStyle w:val="CommentReference"/></w:rPr><w:commentReference w:id="${id}"/></w:r>`,
    },
  ];
}

/**
 * Anchors comment `i` (written with id i) of `comments` in a generated document.xml: around the
 * first body paragraph whose text holds its anchor text, else at the start of the first paragraph.
 */
export function anchorComments(documentXml: string, comments: CommentChunk[]): string {
  const paras = [...documentXml.matchAll(/<w:p\b[^>]*?(?<!\/)>[\s\S]*?<\/w:p>/g)].map((m) => ({
    at: m.index,
    xml: m[0],
  }));
  if (paras.length === 0) return documentXml;
  const pending = new Map<number, Marker[]>();
  comments.forEach((comment, id) => {
    const anchor = comment.anchor.trim();
    let placed = false;
    if (anchor) {
      for (let k = 0; k < paras.length && !placed; k++) {
        const from = runText(paras[k].xml).indexOf(anchor);
        if (from < 0) continue;
        pending.set(k, [...(pending.get(k) ?? []), ...commentMarkers(id, from, from + anchor.length)]);
        placed = true;
      }
    }
    if (!placed) pending.set(0, [...(pending.get(0) ?? []), ...commentMarkers(id, 0, 0)]);
  });
  let out = "";
  let last = 0;
  paras.forEach((p, k) => {
    const markers = pending.get(k);
    if (!markers) return;
    out += documentXml.slice(last, p.at) + insertInParagraph(p.xml, markers);
    last = p.at + p.xml.length;
  });
  return out + documentXml.slice(last);
}

/**
 * The text each comment of a document.xml is anchored to, by comment id: the text between its
 * commentRangeStart and the end of that paragraph or its commentRangeEnd (at most 500 chars).
 */
export function commentAnchors(documentXml: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of documentXml.matchAll(/<w:commentRangeStart\b[^>]*w:id="([^"]*)"[^>]*\/>/g)) {
    const id = m[1];
    const rest = documentXml.slice(m.index + m[0].length, m.index + m[0].length + 200_000);
    const end = new RegExp(`<w:commentRangeEnd\\b[^>]*w:id="${id.replace(/[^\w-]/g, "")}"|</w:p>`).exec(rest);
    const span = end ? rest.slice(0, end.index) : rest.slice(0, 0);
    const text = [...span.replace(/<w:del\b[\s\S]*?<\/w:del>/g, "").matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)]
      .map((t) => decodeXml(t[1]))
      .join("");
    out.set(id, text.slice(0, 500));
  }
  return out;
}
