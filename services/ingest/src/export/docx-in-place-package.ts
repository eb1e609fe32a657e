// Export to .docx in place (docx-in-place.ts): the original package being written back. It owns
// the zip, the main part and its relationships, the writer, and what the export changed (parts
// rewritten, pictures that could not be embedded, warnings), and finishes the package: the
// upload itself when nothing changed, else the re-zipped package with unsafe links dropped.
import type JSZip from "jszip";
import { Numbering } from "../docx/numbering.js";
import { type BodyLayout, bodyLayout } from "../docx/source-map.js";
import { BlockWriter } from "./docx-in-place-writer.js";
import { type ImageLookup, PartRels, textWidthPx } from "./docx-package.js";
import { dropUnsafeRelationships } from "./docx-package-links.js";
import { type LoadedPackage, loadPackage } from "./docx-package-names.js";
import { writeZip } from "./zip-writer.js";

/** The package's main part named by _rels/.rels (default word/document.xml). */
export function mainPartName(rels: string | undefined): string {
  const rel = rels?.match(/<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/)?.[0];
  const target = rel?.match(/Target="([^"]+)"/)?.[1];
  return target ? target.replace(/^\//, "") : "word/document.xml";
}

/** Paragraph style ids of Heading 1-6 (by style name), falling back to "Heading<N>". */
function headingStyles(stylesXml: string | undefined): string[] {
  const ids = [1, 2, 3, 4, 5, 6].map((n) => `Heading${n}`);
  for (const style of stylesXml?.match(/<w:style\b[^>]*w:type="paragraph"[\s\S]*?<\/w:style>/g) ?? []) {
    const id = /w:styleId="([^"]*)"/.exec(style)?.[1];
    const name = /<w:name w:val="([^"]*)"/.exec(style)?.[1]?.toLowerCase();
    const level = name ? /^heading ([1-6])$/.exec(name)?.[1] : undefined;
    if (id && level) ids[Number(level) - 1] = id;
  }
  return ids;
}

/** The original package of an in-place export and what writing it back changed. */
export class InPlacePackage {
  /** What the member should be told (X-Export-Warnings), in order. */
  readonly warnings: string[];
  /** Parts besides the main one that were rewritten (headers, footers, comments, notes, a watermark). */
  rewrittenParts = 0;
  /** The main part's body: its blocks and where the w:sectPr and content sit. */
  readonly layout: BodyLayout;
  private missingImages = 0;
  // Drawing ids must be unique across the document's parts: new ones are numbered above them all.
  private lastDocPrId: number | undefined;

  private constructor(
    private readonly bytes: Buffer,
    private readonly pkg: LoadedPackage,
    /** The main part's name (word/document.xml unless _rels/.rels says otherwise). */
    readonly mainPart: string,
    /** The main part as uploaded. */
    readonly documentXml: string,
    readonly mainRels: PartRels,
    readonly writer: BlockWriter,
    private readonly images: ImageLookup,
  ) {
    this.warnings = [...pkg.warnings];
    this.layout = bodyLayout(documentXml);
  }

  /**
   * Opens the uploaded package: unsafe entry names are normalized before anything is read
   * (docx-package-names.ts). Throws when it has no main document part.
   */
  static async open(bytes: Buffer, images: ImageLookup = () => undefined): Promise<InPlacePackage> {
    const pkg = await loadPackage(bytes);
    const read = async (name: string) => pkg.zip.file(name)?.async("string");
    const mainPart = mainPartName(await read("_rels/.rels"));
    const documentXml = await read(mainPart);
    if (documentXml === undefined) throw new Error("the original package has no main document part");
    const mainRels = await PartRels.of(pkg.zip, mainPart);
    const styles = await read(`${mainRels.dir}styles.xml`);
    // A paragraph Word numbers through its style needs no number written into its text.
    const numberingXml = await read(`${mainRels.dir}numbering.xml`);
    const numbering = numberingXml ? new Numbering(numberingXml, styles) : null;
    const writer = new BlockWriter(
      headingStyles(styles),
      mainRels,
      (pPr) => numbering?.paragraphNumbering(pPr) != null,
    );
    return new InPlacePackage(bytes, pkg, mainPart, documentXml, mainRels, writer, images);
  }

  get zip(): JSZip {
    return this.pkg.zip;
  }

  /** The main part's relationships by id. */
  get rels(): Map<string, { target: string; type: string }> {
    return this.mainRels.rels;
  }

  /** A part's text, undefined when the package has no such part. */
  async read(name: string): Promise<string | undefined> {
    return this.zip.file(name)?.async("string");
  }

  /** `xml` of the part `partRels` relates from, with the pictures the edit added to it embedded; saves its relationships. */
  async finishPart(partRels: PartRels, xml: string): Promise<string> {
    const pictures = this.writer.picturesOf(partRels);
    let out = xml;
    if (pictures.size > 0) {
      this.lastDocPrId ??= await maxDocPrId(this.zip);
      const embedded = await pictures.embed(
        this.zip,
        partRels,
        xml,
        this.images,
        () => textWidthPx(this.documentXml),
        this.lastDocPrId,
      );
      this.lastDocPrId = embedded.lastDocPrId;
      this.missingImages += embedded.missing;
      out = embedded.xml;
    }
    partRels.save(this.zip);
    return out;
  }

  /**
   * The part `target` as `write` makes it, the writer relating links and pictures from that
   * part meanwhile (then from the main part again); finished as finishPart does.
   */
  async inPart(target: string, write: () => string): Promise<string> {
    const partRels = await PartRels.of(this.zip, target);
    this.writer.rels = partRels;
    let xml: string;
    try {
      xml = write();
    } finally {
      this.writer.rels = this.mainRels;
    }
    return this.finishPart(partRels, xml);
  }

  /**
   * The package's bytes with `newDocument` as its main part: the upload itself, byte for byte
   * (not even re-zipped), when nothing changed. Last, the links an edit wrote are checked too
   * (docx-package-links.ts).
   */
  async finish(newDocument: string): Promise<Buffer> {
    if (newDocument !== this.documentXml) this.zip.file(this.mainPart, newDocument);
    // Again: the watermark may have related a header since finishPart saved them.
    this.mainRels.save(this.zip);
    if (this.missingImages > 0)
      this.warnings.push(
        `${this.missingImages} images added in an edit could not be written into the Word file and were left out`,
      );
    const unsafe = await dropUnsafeRelationships(this.zip);
    this.warnings.push(...unsafe.warnings);
    const touched =
      newDocument !== this.documentXml ||
      this.mainRels.changed ||
      this.rewrittenParts > 0 ||
      this.pkg.changed ||
      unsafe.changed;
    return touched ? await writeZip(this.zip) : this.bytes;
  }
}

/** The highest drawing id (`wp:docPr`) in any XML part of the package; 0 when there is none. */
async function maxDocPrId(zip: JSZip): Promise<number> {
  let max = 0;
  for (const [name, file] of Object.entries(zip.files)) {
    if (file.dir || !name.endsWith(".xml")) continue;
    for (const m of (await file.async("string")).matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g))
      max = Math.max(max, Number(m[1]));
  }
  return max;
}
