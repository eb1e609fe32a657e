// HTML → .docx with docx@9: docx/html builds Word's own structure (Heading 1-6 styles, real
// numbering for lists with their starts, tables with merged cells, inline formatting, links,
// images, footnotes from the notes list); headers, footers, the page and a watermark are added here.
import { AlignmentType, Document, Footer, Header, Packer, PageOrientation, Paragraph } from "docx";
import { htmlToContent } from "docx/html";
import { TextWatermark } from "docx/watermarks";
import JSZip from "jszip";
import { anchorComments, type CommentChunk, readComments } from "../docx/comments.js";
import { locateChunks, type MarkedBody, markChunks, stripMarkers } from "./docx-chunk-map.js";
import { applyRevisions, maxWordId, type TrackedChangeInput } from "./docx-revisions.js";
import type { ExportLayout } from "./export-formats.js";
import { HIDDEN_CHARACTER_STYLE, HIDDEN_STYLE_MAP, hiddenTextForDocx } from "./hidden-text.js";
import { splitParts } from "./parts.js";
import { writeZip } from "./zip-writer.js";

const TWIPS_PER_INCH = 1440;
// Pixels of text width docx/html may give an image: the page's text width at 96 dpi.
const PX_PER_INCH = 96;

/** Word's header/footer variants; `data-variant` on a part names one (default when absent). */
type Variant = "default" | "first" | "even";
type Block = ReturnType<typeof htmlToContent>[number];

/** Groups header or footer parts by their `data-variant`, converted to Word blocks. */
function byVariant(
  partsHtml: string[],
  options: Parameters<typeof htmlToContent>[1],
): Partial<Record<Variant, Block[]>> {
  const out: Partial<Record<Variant, Block[]>> = {};
  for (const html of partsHtml) {
    const raw = /\sdata-variant="(\w+)"/.exec(html)?.[1];
    const variant: Variant = raw === "first" || raw === "even" ? raw : "default";
    out[variant] = [...(out[variant] ?? []), ...htmlToContent(html, options)];
  }
  return out;
}

/** What to build. `images` maps each non-data `<img src>` to its bytes. */
export interface DocxInput {
  html: string;
  title: string;
  layout: ExportLayout;
  images: ReadonlyMap<string, Buffer>;
  watermarkText?: string;
  watermarkOpacity?: number;
  /** Write these edits as Word revisions (track_changes); absent: a plain document. */
  trackedChanges?: TrackedChangeInput[];
}

/**
 * Builds a .docx. Out-of-flow chunks (`data-part` header/footer) become the section's headers
 * and footers by variant; comments become Word comments anchored to their `data-anchor` text;
 * hidden text stays hidden (hidden-text.ts). Returns the bytes and the
 * losses docx/html reported (unsupported elements, missing images, ...).
 */
export async function htmlToDocx(input: DocxInput): Promise<{ bytes: Buffer; warnings: string[] }> {
  const warnings = new Set<string>();
  const parts = splitParts(hiddenTextForDocx(input.html));
  const { layout } = input;
  const textWidthIn =
    (layout.orientation === "landscape" ? layout.heightIn : layout.widthIn) -
    layout.margins.left -
    layout.margins.right;
  const options = {
    images: (src: string) => input.images.get(src),
    maxImageWidth: Math.max(48, Math.round(textWidthIn * PX_PER_INCH)),
    onWarning: (w: { message: string }) => warnings.add(w.message),
    styleMap: HIDDEN_STYLE_MAP,
  };
  const tracked = input.trackedChanges;
  // Tracked changes need to know which blocks each chunk became; deleted chunks are built too.
  const marked = tracked
    ? markChunks(
        parts.body,
        tracked.filter((c) => c.kind === "deleted"),
      )
    : undefined;
  const children = [...htmlToContent(withListLabels((marked ? marked.html : parts.body) || "<p></p>"), options)];
  const headers = byVariant(parts.headers, options);
  const footers = byVariant(parts.footers, options);
  if (input.watermarkText) {
    const opacity = Math.min(1, Math.max(0, input.watermarkOpacity ?? 0.3));
    // A watermark lives in a header; it is repeated in every variant so every page shows it.
    for (const variant of new Set<Variant>(["default", ...(Object.keys(headers) as Variant[])])) {
      headers[variant] = [
        ...(headers[variant] ?? []),
        new Paragraph({ children: [new TextWatermark({ text: input.watermarkText, opacity })] }),
      ];
    }
  }
  // Comments go to comments.xml; their anchors are placed in document.xml once it is written.
  const comments = readComments(parts.comments);

  const twips = (inches: number) => Math.round(inches * TWIPS_PER_INCH);
  const doc = new Document({
    evenAndOddHeaderAndFooters: headers.even !== undefined || footers.even !== undefined,
    title: input.title,
    creator: "Redline",
    styles: { characterStyles: [HIDDEN_CHARACTER_STYLE] },
    ...(comments.length > 0
      ? {
          comments: {
            children: comments.map((c, id) => ({
              id,
              author: c.author,
              children: c.lines.flatMap((line) => htmlToContent(`<p>${line}</p>`, options)),
            })),
          },
        }
      : {}),
    sections: [
      {
        properties: {
          // A first-page header/footer only shows when the section says the first page differs.
          titlePage: headers.first !== undefined || footers.first !== undefined,
          page: {
            // docx swaps width and height itself for landscape: give the portrait size.
            size: {
              width: twips(layout.widthIn),
              height: twips(layout.heightIn),
              orientation: layout.orientation === "landscape" ? PageOrientation.LANDSCAPE : PageOrientation.PORTRAIT,
            },
            margin: {
              top: twips(layout.margins.top),
              right: twips(layout.margins.right),
              bottom: twips(layout.margins.bottom),
              left: twips(layout.margins.left),
            },
          },
        },
        headers: Object.fromEntries(
          Object.entries(headers).map(([variant, content]) => [variant, new Header({ children: content })]),
        ),
        footers: Object.fromEntries(
          Object.entries(footers).map(([variant, content]) => [variant, new Footer({ children: content })]),
        ),
        children: children.length > 0 ? children : [new Paragraph({ alignment: AlignmentType.LEFT, children: [] })],
      },
    ],
  });
  const bytes = await Packer.toBuffer(doc);
  // Revisions first (they strip the chunk markers), then the comments' anchors on clean text.
  const revised = tracked && marked ? await withRevisions(bytes, marked, tracked, warnings) : bytes;
  return {
    bytes: comments.length > 0 ? await withCommentAnchors(revised, comments) : revised,
    warnings: [...warnings],
  };
}

/**
 * The HTML with the number of each paragraph Word numbered through its style (`data-list-label`,
 * converters/docx-paragraphs.ts) written before its text: the generated document has no such style.
 */
function withListLabels(html: string): string {
  if (!html.includes("data-list-label=")) return html;
  return html.replace(/<(p|h[1-6])\b([^>]*?)\sdata-list-label="([^"]*)"([^>]*)>/g, "<$1$2$4>$3 ");
}

/** Removes the chunk markers from the built package and writes `changes` as revisions. */
async function withRevisions(
  bytes: Buffer,
  marked: MarkedBody,
  changes: TrackedChangeInput[],
  warnings: Set<string>,
): Promise<Buffer> {
  const zip = await JSZip.loadAsync(bytes);
  const entry = zip.file("word/document.xml");
  if (!entry) return bytes;
  const located = locateChunks(await entry.async("string"), marked.chunkIds, marked.unmarked);
  const result = applyRevisions(located.xml, located.map, changes, (await maxWordId(zip)) + 1);
  if (result.skipped.length > 0)
    warnings.add(
      `${result.skipped.length} tracked changes could not be placed (the current text stands there without revision marks)`,
    );
  zip.file("word/document.xml", result.xml);
  for (const [name, file] of Object.entries(zip.files)) {
    if (file.dir || !name.endsWith(".xml") || name === "word/document.xml") continue;
    const xml = await file.async("string");
    const clean = stripMarkers(xml);
    if (clean !== xml) zip.file(name, clean);
  }
  return writeZip(zip);
}

/** The package with each comment's range and reference placed in word/document.xml (docx/comments.ts). */
async function withCommentAnchors(bytes: Buffer, comments: CommentChunk[]): Promise<Buffer> {
  const zip = await JSZip.loadAsync(bytes);
  const xml = await zip.file("word/document.xml")?.async("string");
  if (xml === undefined) return bytes;
  zip.file("word/document.xml", anchorComments(xml, comments));
  return writeZip(zip);
}
