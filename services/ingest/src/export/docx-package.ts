// Package-level pieces of a .docx written back in place (docx-in-place.ts): a part's
// relationships with the ones an edit adds, pictures an edit added (built by docx/html, the
// generated export's writer, then moved into the original package), the page geometry an
// export asks for written into every section, and a watermark in the headers; what is added to
// an ISO Strict package is written in Strict's vocabulary.
import { createHash } from "node:crypto";
import { Document, Header, Packer, Paragraph } from "docx";
import { htmlToContent } from "docx/html";
import { TextWatermark } from "docx/watermarks";
import JSZip from "jszip";
import { measureToInches, paperSize } from "../docx/page-setup.js";
import { bodyLayout } from "../docx/source-map.js";
import { escapeXml } from "../docx/xml.js";
import type { PageMargins, PageSetup, PaperSize } from "../formats.js";

const REL_BASE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const W_NAMESPACE = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
// ISO Strict packages name their relationship types, and their markup's namespaces, under purl.oclc.org.
const STRICT_REL_BASE = "http://purl.oclc.org/ooxml/officeDocument/relationships";
const STRICT_NAMESPACES: [string, string][] = [
  [REL_BASE, STRICT_REL_BASE],
  ["http://schemas.openxmlformats.org/drawingml/2006/main", "http://purl.oclc.org/ooxml/drawingml/main"],
  ["http://schemas.openxmlformats.org/drawingml/2006/picture", "http://purl.oclc.org/ooxml/drawingml/picture"],
  [
    "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing",
  ],
  [W_NAMESPACE, "http://purl.oclc.org/ooxml/wordprocessingml/main"],
];

/** `xml` written by docx (Transitional) with its namespaces in `strict` packages' spelling. */
function inVocabulary(xml: string, strict: boolean): string {
  if (!strict) return xml;
  let out = xml;
  for (const [transitional, iso] of STRICT_NAMESPACES) out = out.replaceAll(`"${transitional}`, `"${iso}`);
  return out;
}
const HEADER_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml";
const TWIPS_PER_INCH = 1440;
const PX_PER_INCH = 96;

interface Rel {
  target: string;
  type: string;
  external: boolean;
}

/**
 * One part's relationships (`word/_rels/document.xml.rels`, a header's, …): the ones it has,
 * resolved against the part's folder, and the ones an edit adds, written back by `save`.
 */
export class PartRels {
  readonly rels = new Map<string, Rel>();
  private readonly added: string[] = [];
  private counter = 0;

  /** `partName` is the part these relationships belong to (e.g. `word/header1.xml`). */
  constructor(
    readonly partName: string,
    private readonly xml: string,
  ) {
    const dir = this.dir;
    for (const tag of xml.match(/<Relationship\b[^>]*>/g) ?? []) {
      const id = /\sId="([^"]*)"/.exec(tag)?.[1];
      const target = /\sTarget="([^"]*)"/.exec(tag)?.[1];
      if (!id || target === undefined) continue;
      const external = /TargetMode="External"/.test(tag);
      this.rels.set(id, {
        target: external ? target.replace(/&amp;/g, "&") : target.startsWith("/") ? target.slice(1) : dir + target,
        type: /\sType="([^"]*)"/.exec(tag)?.[1] ?? "",
        external,
      });
    }
  }

  /** The relationships part of `partName` in `zip` (empty when it has none). */
  static async of(zip: JSZip, partName: string): Promise<PartRels> {
    return new PartRels(partName, (await zip.file(relsNameOf(partName))?.async("string")) ?? "");
  }

  /** The folder of the part, with its trailing slash ("" at the package root). */
  get dir(): string {
    return this.partName.includes("/") ? this.partName.slice(0, this.partName.lastIndexOf("/") + 1) : "";
  }

  /** Whether the package is ISO Strict (its relationship types are purl.oclc.org ones). */
  get strict(): boolean {
    return /\sType="http:\/\/purl\.oclc\.org\//.test(this.xml);
  }

  /** The full relationship type of `name` (hyperlink, image, header) in the package's vocabulary. */
  type(name: string): string {
    return `${this.strict ? STRICT_REL_BASE : REL_BASE}/${name}`;
  }

  /** A relationship id for an external link, reusing the part's own when it has one. */
  link(href: string): string {
    const type = this.type("hyperlink");
    for (const [id, rel] of this.rels) if (rel.type === type && rel.target === href) return id;
    return this.add(type, href, true);
  }

  /** A relationship id for a picture stored at `partPath` (a package path, e.g. `word/media/x.png`). */
  image(partPath: string): string {
    return this.internal(this.type("image"), partPath);
  }

  /** A relationship id of `type` to the part at `partPath`, reusing one the part already has. */
  internal(type: string, partPath: string): string {
    for (const [id, rel] of this.rels) if (rel.type === type && rel.target === partPath) return id;
    const relative = partPath.startsWith(this.dir) ? partPath.slice(this.dir.length) : `/${partPath}`;
    return this.add(type, relative, false, partPath);
  }

  private add(type: string, target: string, external: boolean, resolved = target): string {
    let id: string;
    do id = `rIdRl${++this.counter}`;
    while (this.rels.has(id));
    this.rels.set(id, { target: resolved, type, external });
    this.added.push(
      `<Relationship Id="${id}" Type="${type}" Target="${escapeXml(target)}"${external ? ' TargetMode="External"' : ""}/>`,
    );
    return id;
  }

  /** Whether an edit added relationships. */
  get changed(): boolean {
    return this.added.length > 0;
  }

  /** Writes the added relationships into the package (nothing when none were added). */
  save(zip: JSZip): void {
    if (!this.changed) return;
    const xml = this.xml.includes("</Relationships>")
      ? this.xml.replace(/<\/Relationships>\s*$/, `${this.added.join("")}</Relationships>`)
      : `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${this.added.join("")}</Relationships>`;
    zip.file(relsNameOf(this.partName), xml);
  }
}

/** `word/_rels/document.xml.rels` for `word/document.xml`. */
function relsNameOf(partName: string): string {
  const at = partName.lastIndexOf("/") + 1;
  return `${partName.slice(0, at)}_rels/${partName.slice(at)}.rels`;
}

/**
 * The part a relationships part belongs to (`word/document.xml` for
 * `word/_rels/document.xml.rels`; "" for the package's own `_rels/.rels`), or null when `name`
 * is not a relationships part.
 */
export function partOfRels(name: string): string | null {
  const m = /^((?:[^/]*\/)*)_rels\/([^/]*)\.rels$/.exec(name);
  return m ? m[1] + m[2] : null;
}

// ---------------------------------------------------------------------------------------------
// Pictures an edit added.

/** Resolves an `<img src>` to its bytes (a data: URL or a stored image); undefined when it cannot. */
export type ImageLookup = (src: string) => Buffer | undefined;

// Where picture `n` goes in written XML until embed() replaces it: a tag, which no escaped text can forge.
const placeholder = (n: number) => `<redline-picture n="${n}"/>`;
const PLACEHOLDER = /<redline-picture n="(\d+)"\/>/g;

/** Pictures an edit added to the body, collected while blocks are written, embedded at the end. */
export class NewPictures {
  private readonly imgs: string[] = [];

  /** A placeholder run for `imgHtml` (the `<img>` element as HTML) that embed() replaces. */
  add(imgHtml: string): string {
    this.imgs.push(imgHtml);
    return placeholder(this.imgs.length - 1);
  }

  get size(): number {
    return this.imgs.length;
  }

  /**
   * Builds the collected pictures with docx/html (the generated export's sizing: natural size,
   * CSS width/height, never wider than `maxWidthPx`), copies each picture's bytes into
   * `word/media/` of `zip` under a content-addressed name, relates them from `rels` and puts
   * each run in place of its placeholder in `xml`. Returns the XML and how many pictures could not
   * be built (unreadable or formats Word cannot show); their placeholders are removed.
   * `maxWidthPx` is asked only when there are pictures (it reads the whole document part). Drawing
   * ids (`wp:docPr`) are numbered above `lastDocPrId` and `xml`'s own; `lastDocPrId` in the answer
   * is the last one given.
   */
  async embed(
    zip: JSZip,
    rels: PartRels,
    xml: string,
    lookup: ImageLookup,
    maxWidthPx: () => number,
    lastDocPrId = 0,
  ): Promise<{ xml: string; missing: number; lastDocPrId: number }> {
    if (this.imgs.length === 0) return { xml, missing: 0, lastDocPrId };
    const content = htmlToContent(this.imgs.map((img) => `<p>${img}</p>`).join(""), {
      images: (src: string) => lookup(src),
      maxImageWidth: maxWidthPx(),
    });
    const built = await JSZip.loadAsync(
      await Packer.toBuffer(new Document({ sections: [{ children: [...content] }] })),
    );
    const builtXml = (await built.file("word/document.xml")?.async("string")) ?? "";
    const builtRels = await PartRels.of(built, "word/document.xml");
    const strict = rels.strict;
    const builtTypes = (await built.file("[Content_Types].xml")?.async("string")) ?? "";
    let types = (await zip.file("[Content_Types].xml")?.async("string")) ?? "";
    const typesBefore = types;
    let docPrId = Math.max(lastDocPrId, ...[...xml.matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g)].map((m) => Number(m[1])));
    const blocks = bodyLayout(builtXml).blocks.map((b) => builtXml.slice(b.start, b.end));
    const runs = new Map<number, string>();
    for (let n = 0; n < this.imgs.length; n++) {
      let run = /<w:r>(?:(?!<\/w:r>)[\s\S])*?<w:drawing>[\s\S]*?<\/w:r>/.exec(blocks[n] ?? "")?.[0];
      if (!run) continue;
      for (const rid of new Set([...run.matchAll(/\sr:embed="([^"]+)"/g)].map((m) => m[1]))) {
        const media = builtRels.rels.get(rid)?.target;
        const bytes = media ? await built.file(media)?.async("nodebuffer") : undefined;
        if (!media || !bytes) {
          run = undefined;
          break;
        }
        const ext = media.slice(media.lastIndexOf(".") + 1).toLowerCase();
        const path = `${rels.dir}media/redline-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}.${ext}`;
        if (!zip.file(path)) zip.file(path, bytes);
        types = withDefaultType(types, ext, builtTypes);
        run = run.replaceAll(`r:embed="${rid}"`, `r:embed="${rels.image(path)}"`);
      }
      // Drawing object ids must be unique in the document.
      if (run)
        runs.set(
          n,
          inVocabulary(run, strict).replace(
            /(<wp:docPr\b[^>]*\sid=")\d+"/,
            (_m, head: string) => `${head}${++docPrId}"`,
          ),
        );
    }
    if (types !== typesBefore) zip.file("[Content_Types].xml", types);
    const out = withNamespaces(
      xml.replace(PLACEHOLDER, (_m, n: string) => runs.get(Number(n)) ?? ""),
      runs.size > 0,
      strict ? STRICT_DRAWING_NAMESPACES : DRAWING_NAMESPACES,
    );
    return { xml: out, missing: this.imgs.length - runs.size, lastDocPrId: docPrId };
  }
}

/** `types` with a Default content type for `ext` (taken from `from`) unless it has one. */
function withDefaultType(types: string, ext: string, from: string): string {
  const forExt = new RegExp(`<Default\\b[^>]*\\sExtension="${ext}"[^>]*>`, "i");
  if (forExt.test(types)) return types;
  const contentType = /\sContentType="([^"]*)"/.exec(forExt.exec(from)?.[0] ?? "")?.[1];
  if (!contentType) return types;
  return types.replace(/(<Types\b[^>]*>)/, `$1<Default Extension="${ext}" ContentType="${contentType}"/>`);
}

const DRAWING_NAMESPACES: Record<string, string> = {
  wp: "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
  r: REL_BASE,
};
const STRICT_DRAWING_NAMESPACES = Object.fromEntries(
  Object.entries(DRAWING_NAMESPACES).map(([p, uri]) => [p, inVocabulary(`"${uri}`, true).slice(1)]),
);

/** `xml` (a main document part) with the namespaces a picture run uses declared on its root. */
function withNamespaces(xml: string, needed: boolean, namespaces: Record<string, string>): string {
  if (!needed) return xml;
  return xml.replace(/<w:(?:document|hdr|ftr|comments|footnotes|endnotes)\b[^>]*>/, (root) => {
    const missing = Object.entries(namespaces).filter(([p]) => !new RegExp(`\\sxmlns:${p}=`).test(root));
    if (missing.length === 0) return root;
    const decls = missing.map(([p, uri]) => ` xmlns:${p}="${uri}"`).join("");
    return root.replace(/(\/?)>$/, `${decls}$1>`);
  });
}

// ---------------------------------------------------------------------------------------------
// A watermark: the generated export's (docx/watermarks, a VML text shape) in every header shown.

const WATERMARK_NAMESPACES: Record<string, string> = {
  v: "urn:schemas-microsoft-com:vml",
  o: "urn:schemas-microsoft-com:office:office",
  w10: "urn:schemas-microsoft-com:office:word",
};

/** The paragraph docx/watermarks writes for `text` at `opacity` (0..1), as header XML. */
async function watermarkParagraph(text: string, opacity: number): Promise<string> {
  const paragraph = new Paragraph({ children: [new TextWatermark({ text, opacity })] });
  const doc = new Document({
    sections: [{ headers: { default: new Header({ children: [paragraph] }) }, children: [] }],
  });
  const built = await JSZip.loadAsync(await Packer.toBuffer(doc));
  const target = [...(await PartRels.of(built, "word/document.xml")).rels.values()].find(
    (r) => r.type === `${REL_BASE}/header`,
  )?.target;
  const xml = target ? ((await built.file(target)?.async("string")) ?? "") : "";
  const p = /<w:p>(?:(?!<\/w:p>)[\s\S])*?<w:pict>[\s\S]*?<\/w:p>/.exec(xml)?.[0];
  if (!p) throw new Error("docx wrote no watermark shape");
  return p;
}

/**
 * `documentXml` and the package with a text watermark on every page: the watermark paragraph goes
 * first in every header part a section references, and where the first section shows a header
 * variant it has no part for (default; first with w:titlePg; even with evenAndOddHeaders), a
 * header part holding only the watermark is added and referenced (later sections inherit it).
 */
export async function addWatermark(
  zip: JSZip,
  mainRels: PartRels,
  documentXml: string,
  watermark: { text: string; opacity: number },
): Promise<string> {
  const paragraph = await watermarkParagraph(watermark.text, Math.min(1, Math.max(0, watermark.opacity)));
  const referenced = new Set<string>();
  for (const m of documentXml.matchAll(/<w:headerReference\b[^>]*\sr:id="([^"]+)"/g)) {
    const target = mainRels.rels.get(m[1])?.target;
    if (target) referenced.add(target);
  }
  for (const target of referenced) {
    const xml = await zip.file(target)?.async("string");
    if (xml === undefined) continue;
    const withShape = xml.replace(/<w:hdr\b[^>]*>/, (open) => `${open}${paragraph}`);
    zip.file(target, withNamespaces(withShape, true, WATERMARK_NAMESPACES));
  }
  const first = /<w:sectPr\b[^>]*>[\s\S]*?<\/w:sectPr>/.exec(documentXml);
  if (!first) return documentXml;
  const settings = (await zip.file(`${mainRels.dir}settings.xml`)?.async("string")) ?? "";
  const shown = ["default"];
  if (/<w:titlePg(?:\s+w:val="(?:1|true|on)")?\s*\/>/.test(first[0])) shown.push("first");
  if (/<w:evenAndOddHeaders(?:\s+w:val="(?:1|true|on)")?\s*\/>/.test(settings)) shown.push("even");
  const missing = shown.filter((v) => !new RegExp(`<w:headerReference\\b[^>]*w:type="${v}"`).test(first[0]));
  if (missing.length === 0) return documentXml;
  const part = `${mainRels.dir}header-redline-watermark.xml`;
  const wordNamespace = /\sxmlns:w="([^"]*)"/.exec(documentXml)?.[1] ?? W_NAMESPACE;
  const relNamespace = mainRels.strict ? STRICT_REL_BASE : REL_BASE;
  zip.file(
    part,
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:hdr xmlns:w="${wordNamespace}" xmlns:r="${relNamespace}"${Object.entries(
      WATERMARK_NAMESPACES,
    )
      .map(([p, uri]) => ` xmlns:${p}="${uri}"`)
      .join("")}>${paragraph}</w:hdr>`,
  );
  const types = (await zip.file("[Content_Types].xml")?.async("string")) ?? "";
  if (!types.includes(`PartName="/${part}"`))
    zip.file(
      "[Content_Types].xml",
      types.replace(/<\/Types>\s*$/, `<Override PartName="/${part}" ContentType="${HEADER_TYPE}"/></Types>`),
    );
  const rid = mainRels.internal(mainRels.type("header"), part);
  // Header references come first in a w:sectPr (CT_SectPr's sequence).
  const refs = missing.map((v) => `<w:headerReference w:type="${v}" r:id="${rid}"/>`).join("");
  const sect = first[0].replace(/^<w:sectPr\b[^>]*>/, (open) => `${open}${refs}`);
  return withNamespaces(
    documentXml.slice(0, first.index) + sect + documentXml.slice(first.index + first[0].length),
    true,
    { r: relNamespace },
  );
}

/** The text width of the document's last section in CSS pixels (how wide a picture may be). */
export function textWidthPx(documentXml: string): number {
  const sections = [...documentXml.matchAll(/<w:sectPr\b[\s\S]*?<\/w:sectPr>/g)];
  const last = sections.at(-1)?.[0] ?? "";
  const width = measureToInches(/<w:pgSz\b[^>]*\sw:w="([^"]*)"/.exec(last)?.[1]) ?? 8.5;
  const left = measureToInches(/<w:pgMar\b[^>]*\sw:left="([^"]*)"/.exec(last)?.[1]) ?? 1;
  const right = measureToInches(/<w:pgMar\b[^>]*\sw:right="([^"]*)"/.exec(last)?.[1]) ?? 1;
  const height = measureToInches(/<w:pgSz\b[^>]*\sw:h="([^"]*)"/.exec(last)?.[1]) ?? 11;
  const landscape = /<w:pgSz\b[^>]*w:orient="landscape"/.test(last) || width > height;
  const across = landscape ? Math.max(width, height) : width;
  return Math.max(48, Math.round((across - left - right) * PX_PER_INCH));
}

// ---------------------------------------------------------------------------------------------
// Page geometry an export asks for.

/** The page an export asks for where it differs from the original's own: each field optional. */
export interface PageRequest {
  size?: PaperSize;
  orientation?: "portrait" | "landscape";
  margins?: PageMargins;
}

const NAMED_IN: Record<Exclude<PaperSize, object>, [number, number]> = {
  Letter: [8.5, 11],
  A4: [210 / 25.4, 297 / 25.4],
  Legal: [8.5, 14],
};

const twips = (inches: number) => String(Math.round(inches * TWIPS_PER_INCH));

/**
 * Every section of `documentXml` (section breaks and the body's last w:sectPr; the history in a
 * w:sectPrChange apart) on the page `request` asks for: a size keeps each section's own
 * orientation unless one is asked for, margins keep the header, footer and gutter distances.
 */
export function applyPageRequest(documentXml: string, request: PageRequest): string {
  if (!request.size && !request.orientation && !request.margins) return documentXml;
  // A tracked section change nests the old w:sectPr inside the current one: it is history, set aside.
  const history: string[] = [];
  const xml = documentXml.replace(/<w:sectPrChange\b[\s\S]*?<\/w:sectPrChange>/g, (m) => {
    history.push(m);
    return `<redline-history n="${history.length - 1}"/>`;
  });
  return xml
    .replace(/<w:sectPr\b[^>]*>[\s\S]*?<\/w:sectPr>/g, (sect) => pagedSection(sect, request))
    .replace(/<redline-history n="(\d+)"\/>/g, (_m, n: string) => history[Number(n)]);
}

// What follows w:pgSz and w:pgMar in a w:sectPr (CT_SectPr's sequence): where a missing one goes.
const AFTER_PGSZ = ["pgMar", "paperSrc", "pgBorders", "lnNumType", "pgNumType", "cols", "formProt", "vAlign"];
const AFTER_PGMAR = AFTER_PGSZ.slice(1);
const AFTER_REST = ["noEndnote", "titlePg", "textDirection", "bidi", "rtlGutter", "docGrid", "printerSettings"];

/** `sect` with `tag` inserted before the first child named in `before`, else at its end. */
function insertChild(sect: string, tag: string, before: string[]): string {
  const at = new RegExp(`<w:(?:${[...before, ...AFTER_REST, "sectPrChange"].join("|")})\\b`).exec(sect);
  const index = at ? at.index : sect.lastIndexOf("</w:sectPr>");
  return sect.slice(0, index) + tag + sect.slice(index);
}

function pagedSection(sect: string, request: PageRequest): string {
  let out = /<w:pgSz\b/.test(sect) ? sect : insertChild(sect, '<w:pgSz w:w="12240" w:h="15840"/>', AFTER_PGSZ);
  if (request.size || request.orientation) out = out.replace(/<w:pgSz\b[^>]*\/>/, (tag) => pageSize(tag, request));
  const margins = request.margins;
  if (!margins) return out;
  if (!/<w:pgMar\b/.test(out))
    out = insertChild(
      out,
      '<w:pgMar w:top="0" w:right="0" w:bottom="0" w:left="0" w:header="720" w:footer="720" w:gutter="0"/>',
      AFTER_PGMAR,
    );
  return out.replace(/<w:pgMar\b[^>]*\/>/, (pgMar) => {
    let tag = pgMar;
    for (const side of ["top", "right", "bottom", "left"] as const) {
      // A negative top/bottom ("text may not push the margin") keeps its sign.
      const negative = new RegExp(`\\sw:${side}="-`).test(tag);
      const value = `${negative ? "-" : ""}${twips(margins[side])}`;
      tag = new RegExp(`\\sw:${side}="`).test(tag)
        ? tag.replace(new RegExp(`(\\sw:${side}=")[^"]*"`), `$1${value}"`)
        : tag.replace(/\s*\/>$/, ` w:${side}="${value}"/>`);
    }
    return tag;
  });
}

/** A w:pgSz start tag on the asked size and orientation, its other attributes kept. */
function pageSize(pgSz: string, request: PageRequest): string {
  const w = measureToInches(/\sw:w="([^"]*)"/.exec(pgSz)?.[1]) ?? 8.5;
  const h = measureToInches(/\sw:h="([^"]*)"/.exec(pgSz)?.[1]) ?? 11;
  const orient = /\sw:orient="(\w+)"/.exec(pgSz)?.[1];
  const landscape = request.orientation
    ? request.orientation === "landscape"
    : orient === "landscape" || (orient !== "portrait" && w > h);
  const size = request.size ?? paperSize(w, h);
  const [pw, ph] = typeof size === "string" ? NAMED_IN[size] : [size.width, size.height];
  const [ow, oh] = landscape ? [ph, pw] : [pw, ph];
  // w:code names the paper the section had; another size makes it wrong.
  const kept = pgSz
    .replace(/^<w:pgSz|\s*\/>$/g, "")
    .replace(/\s(?:w:w|w:h|w:orient)="[^"]*"/g, "")
    .replace(request.size ? /\sw:code="[^"]*"/ : /(?!)/, "");
  return `<w:pgSz w:w="${twips(ow)}" w:h="${twips(oh)}"${landscape ? ' w:orient="landscape"' : ""}${kept}/>`;
}

/**
 * What of `asked` (an export's options, else the document's page setup) differs from the page
 * the original's last section has (`original`, docxPageSetup; null: all of it differs): only
 * that is written, so a document whose page nobody changed keeps its sections as they were.
 */
export function pageChanges(asked: PageRequest, original: PageSetup | null): PageRequest {
  const close = (a: number, b: number) => Math.abs(a - b) < 0.01;
  const sameSize = (a: PaperSize, b: PaperSize) =>
    typeof a === "string" || typeof b === "string" ? a === b : close(a.width, b.width) && close(a.height, b.height);
  const out: PageRequest = {};
  if (asked.size && !(original && sameSize(asked.size, original.size))) out.size = asked.size;
  if (asked.orientation && asked.orientation !== original?.orientation) out.orientation = asked.orientation;
  const m = asked.margins;
  const o = original?.margins;
  if (m && !(o && close(m.top, o.top) && close(m.right, o.right) && close(m.bottom, o.bottom) && close(m.left, o.left)))
    out.margins = m;
  return out;
}
