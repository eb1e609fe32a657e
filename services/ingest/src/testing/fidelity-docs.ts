// Test helpers: .docx files built for Word constructs the corpus lacks (issue #32). The body is
// built with the `docx` package; what it cannot write (a w:num with w:lvlOverride, numbering
// through a paragraph style, a repeating-section content control) is written into the package
// afterwards as Word writes it.
import {
  AlignmentType,
  CommentRangeEnd,
  CommentRangeStart,
  CommentReference,
  Document,
  Footer,
  Header,
  ImageRun,
  LevelFormat,
  Packer,
  Paragraph,
  SymbolRun,
  Table,
  TableCell,
  TableRow,
  TextRun,
} from "docx";
import JSZip from "jszip";

/** One numbered paragraph of `contractDocx`: its text, its w:num and level, and the label Word shows. */
export interface ContractItem {
  text: string;
  numId: number;
  ilvl: number;
  label: string;
}

const lvl = (ilvl: number, format: string, text: string, start = 1) =>
  `<w:lvl w:ilvl="${ilvl}"><w:start w:val="${start}"/><w:numFmt w:val="${format}"/><w:lvlText w:val="${text}"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="${720 * (ilvl + 1)}" w:hanging="360"/></w:pPr></w:lvl>`;

const NUMBERING_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:abstractNum w:abstractNumId="10"><w:multiLevelType w:val="multilevel"/>${lvl(0, "decimal", "%1.")}${lvl(1, "decimal", "%1.%2.")}${lvl(2, "lowerLetter", "(%3)")}</w:abstractNum>
<w:abstractNum w:abstractNumId="11"><w:multiLevelType w:val="hybridMultilevel"/>${lvl(0, "bullet", "\u2022")}${lvl(1, "bullet", "o")}</w:abstractNum>
<w:abstractNum w:abstractNumId="12"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "decimal", "%1.")}</w:abstractNum>
<w:abstractNum w:abstractNumId="13"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "decimalZero", "%1.")}</w:abstractNum>
<w:abstractNum w:abstractNumId="14"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "lowerRoman", "%1)")}</w:abstractNum>
<w:abstractNum w:abstractNumId="15"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "upperRoman", "%1.", 4)}</w:abstractNum>
<w:abstractNum w:abstractNumId="16"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "decimal", "Article %1")}</w:abstractNum>
<w:abstractNum w:abstractNumId="17"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "upperLetter", "%1.")}</w:abstractNum>
<w:abstractNum w:abstractNumId="18"><w:multiLevelType w:val="singleLevel"/>${lvl(0, "decimal", "Clause %1.").replace("<w:numFmt", '<w:pStyle w:val="ListClause"/><w:numFmt')}</w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num>
<w:num w:numId="2"><w:abstractNumId w:val="11"/></w:num>
<w:num w:numId="3"><w:abstractNumId w:val="12"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="17"/></w:lvlOverride></w:num>
<w:num w:numId="4"><w:abstractNumId w:val="12"/><w:lvlOverride w:ilvl="0">${lvl(0, "upperLetter", "%1.", 3)}</w:lvlOverride></w:num>
<w:num w:numId="5"><w:abstractNumId w:val="13"/></w:num>
<w:num w:numId="6"><w:abstractNumId w:val="14"/></w:num>
<w:num w:numId="7"><w:abstractNumId w:val="15"/></w:num>
<w:num w:numId="8"><w:abstractNumId w:val="16"/></w:num>
<w:num w:numId="9"><w:abstractNumId w:val="17"/></w:num>
<w:num w:numId="10"><w:abstractNumId w:val="18"/></w:num>
</w:numbering>`;

/** The numbered paragraphs of `contractDocx`, in order, with the label Word shows on each. */
export const CONTRACT_ITEMS: ContractItem[] = [
  { text: "Definitions", numId: 1, ilvl: 0, label: "1." },
  { text: "Scope of the agreement", numId: 1, ilvl: 1, label: "1.1." },
  { text: "Parties", numId: 1, ilvl: 0, label: "2." },
  // Level 1 is skipped: the item is nested two lists deep, under "Parties".
  { text: "Skipped level item", numId: 1, ilvl: 2, label: "(a)" },
  // Another list at a deeper level interrupts clause 2 ...
  { text: "Bullet of another list", numId: 2, ilvl: 1, label: "o" },
  { text: "Second bullet", numId: 2, ilvl: 1, label: "o" },
  // ... and the clauses go on at 3.
  { text: "Payment", numId: 1, ilvl: 0, label: "3." },
  // A w:startOverride restarts the clause list of another num at 17.
  { text: "Termination", numId: 3, ilvl: 0, label: "17." },
  { text: "Survival", numId: 3, ilvl: 0, label: "18." },
  // A w:lvlOverride with its own w:lvl: upperLetter from 3.
  { text: "Annex", numId: 4, ilvl: 0, label: "C." },
  { text: "Zero padded", numId: 5, ilvl: 0, label: "01." },
  { text: "Roman in parentheses", numId: 6, ilvl: 0, label: "i)" },
  { text: "Roman from four", numId: 7, ilvl: 0, label: "IV." },
  { text: "Letter list", numId: 9, ilvl: 0, label: "A." },
];

/** The paragraph numbered through its paragraph style (w:numPr in styles.xml), and its label. */
export const STYLE_NUMBERED = { text: "Governing law", label: "Article 1" };

/** A paragraph numbered through a style that a list level names (w:lvl/w:pStyle): an item mammoth makes. */
export const STYLE_LIST_ITEM = { text: "Confidentiality", label: "Clause 1." };

/** Aligned paragraphs of `contractDocx`: their text and the CSS text-align Word's w:jc means. */
export const ALIGNED = [
  { text: "MASTER SERVICES AGREEMENT", align: "center" },
  { text: "Signed for the Supplier", align: "right" },
  { text: "This paragraph is justified across the full width of the text.", align: "justify" },
];
/** A paragraph centred by its paragraph style, not by its own w:jc. */
export const STYLE_CENTERED = "Centred by its style";
/** An indented paragraph: 1 inch left (72pt), 0.5 inch first line (36pt). */
export const INDENTED = "An indented quotation of the statute.";

const STYLE_XML =
  `<w:style w:type="paragraph" w:customStyle="1" w:styleId="ClauseArticle"><w:name w:val="Clause Article"/><w:pPr><w:numPr><w:numId w:val="8"/></w:numPr></w:pPr></w:style>` +
  `<w:style w:type="paragraph" w:customStyle="1" w:styleId="ListClause"><w:name w:val="List Clause"/><w:pPr><w:numPr><w:numId w:val="10"/></w:numPr></w:pPr></w:style>` +
  `<w:style w:type="paragraph" w:customStyle="1" w:styleId="TitleBlock"><w:name w:val="Title Block"/><w:pPr><w:jc w:val="center"/></w:pPr></w:style>`;

/** Puts `pPr` (inner XML) first in the paragraph whose text is `text`. */
function withProps(xml: string, text: string, pPr: string): string {
  const at = xml.indexOf(`>${text}</w:t>`);
  const open = xml.lastIndexOf("<w:p>", at);
  if (at < 0 || open < 0) throw new Error(`paragraph "${text}" not found`);
  return `${xml.slice(0, open)}<w:p><w:pPr>${pPr}</w:pPr>${xml.slice(open + "<w:p>".length)}`;
}

/**
 * A contract-like .docx exercising Word numbering (CONTRACT_ITEMS: lvlOverride, startOverride,
 * skipped levels, a list continued after another list interrupted it at a deeper level,
 * decimalZero, "%1)" and "Article %1" labels), numbering from a paragraph style, alignment
 * (direct and from a style) and indentation.
 */
export async function contractDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ alignment: AlignmentType.CENTER, children: [new TextRun(ALIGNED[0].text)] }),
          new Paragraph("The parties agree as follows."),
          ...CONTRACT_ITEMS.slice(0, 7).map((item) => new Paragraph(item.text)),
          new Paragraph("A paragraph between the clause lists."),
          ...CONTRACT_ITEMS.slice(7).map((item) => new Paragraph(item.text)),
          new Paragraph(STYLE_NUMBERED.text),
          new Paragraph(STYLE_LIST_ITEM.text),
          new Paragraph(STYLE_CENTERED),
          new Paragraph({ indent: { left: 1440, firstLine: 720 }, children: [new TextRun(INDENTED)] }),
          new Paragraph({ alignment: AlignmentType.JUSTIFIED, children: [new TextRun(ALIGNED[2].text)] }),
          new Paragraph({ alignment: AlignmentType.RIGHT, children: [new TextRun(ALIGNED[1].text)] }),
        ],
      },
    ],
  });
  const zip = await JSZip.loadAsync(await Packer.toBuffer(doc));
  let xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
  for (const item of CONTRACT_ITEMS)
    xml = withProps(
      xml,
      item.text,
      `<w:numPr><w:ilvl w:val="${item.ilvl}"/><w:numId w:val="${item.numId}"/></w:numPr>`,
    );
  xml = withProps(xml, STYLE_NUMBERED.text, '<w:pStyle w:val="ClauseArticle"/>');
  xml = withProps(xml, STYLE_CENTERED, '<w:pStyle w:val="TitleBlock"/>');
  xml = withProps(xml, STYLE_LIST_ITEM.text, '<w:pStyle w:val="ListClause"/>');
  zip.file("word/document.xml", xml);
  const styles = (await zip.file("word/styles.xml")?.async("string")) ?? "";
  zip.file("word/styles.xml", styles.replace("</w:styles>", `${STYLE_XML}</w:styles>`));
  await addPart(zip, "word/numbering.xml", NUMBERING_XML, "numbering");
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

const WORD_TYPES = "application/vnd.openxmlformats-officedocument.wordprocessingml";

/** Adds (or replaces) a part of the main document with its relationship and content type. */
export async function addPart(zip: JSZip, name: string, xml: string, kind: string): Promise<void> {
  const existed = zip.file(name) !== null;
  zip.file(name, xml);
  if (existed) return;
  const relsName = "word/_rels/document.xml.rels";
  const rels = (await zip.file(relsName)?.async("string")) ?? "";
  zip.file(
    relsName,
    rels.replace(
      "</Relationships>",
      `<Relationship Id="rIdFid${kind}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${kind}" Target="${name.replace(/^word\//, "")}"/></Relationships>`,
    ),
  );
  const types = (await zip.file("[Content_Types].xml")?.async("string")) ?? "";
  zip.file(
    "[Content_Types].xml",
    types.replace("</Types>", `<Override PartName="/${name}" ContentType="${WORD_TYPES}.${kind}+xml"/></Types>`),
  );
}

/** The paragraphs of `repeatingSectionDocx`'s repeating section: two items of two paragraphs. */
export const SECTION_PARAGRAPHS = [
  "First item, first paragraph.",
  "First item, second paragraph.",
  "Second item, first paragraph.",
  "Second item, second paragraph.",
];

const sdtItem = (paragraphs: string[], id: number) =>
  `<w:sdt><w:sdtPr><w:id w:val="${id}"/><w15:repeatingSectionItem/></w:sdtPr><w:sdtContent>${paragraphs
    .map((t) => `<w:p><w:r><w:t>${t}</w:t></w:r></w:p>`)
    .join("")}</w:sdtContent></w:sdt>`;

/** The repeating section of `repeatingSectionDocx` as Word writes it (w15:repeatingSection of two items). */
export const REPEATING_SECTION_XML =
  `<w:sdt><w:sdtPr><w:alias w:val="Parties"/><w:tag w:val="parties"/><w:id w:val="901"/><w15:repeatingSection/></w:sdtPr><w:sdtContent>` +
  `${sdtItem(SECTION_PARAGRAPHS.slice(0, 2), 902)}${sdtItem(SECTION_PARAGRAPHS.slice(2), 903)}</w:sdtContent></w:sdt>`;

/**
 * A .docx whose body holds a repeating-section content control (Word 2013's w15:repeatingSection)
 * of two items with two paragraphs each, between two plain paragraphs.
 */
export async function repeatingSectionDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [new Paragraph("Before the section."), new Paragraph("SECTION"), new Paragraph("After the section.")],
      },
    ],
  });
  const zip = await JSZip.loadAsync(await Packer.toBuffer(doc));
  const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
  const at = xml.indexOf(">SECTION</w:t>");
  const open = xml.lastIndexOf("<w:p>", at);
  const close = xml.indexOf("</w:p>", at) + "</w:p>".length;
  zip.file("word/document.xml", xml.slice(0, open) + REPEATING_SECTION_XML + xml.slice(close));
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

/** The checklist rows of `numberedCellsDocx`: the second cell's text of each row. */
export const CHECKLIST = ["Check the seals", "Record the meter reading", "Sign the log"];

/**
 * A .docx with a checklist table whose first column is numbered by Word (one numbered, empty
 * paragraph per cell: 1., 2., 3.) and whose second column holds the text.
 */
export async function numberedCellsDocx(): Promise<Buffer> {
  const doc = new Document({
    numbering: {
      config: [{ reference: "steps", levels: [{ level: 0, format: LevelFormat.DECIMAL, text: "%1.", start: 1 }] }],
    },
    sections: [
      {
        children: [
          new Paragraph("Checklist"),
          new Table({
            rows: CHECKLIST.map(
              (text) =>
                new TableRow({
                  children: [
                    new TableCell({
                      children: [new Paragraph({ numbering: { reference: "steps", level: 0 }, children: [] })],
                    }),
                    new TableCell({ children: [new Paragraph(text)] }),
                  ],
                }),
            ),
          }),
        ],
      },
    ],
  });
  return Buffer.from(await Packer.toBuffer(doc));
}

/** A 2x2 red PNG. */
export const RED_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

const picture = (description: string) =>
  new Paragraph({
    children: [
      new ImageRun({
        type: "png",
        data: RED_PNG,
        transformation: { width: 40, height: 40 },
        altText: { name: description, description, title: description },
      }),
    ],
  });

/** Alt texts of the pictures `picturePartsDocx` holds, by where each is the only content. */
export const PART_PICTURES = {
  header: { default: "Default header logo", first: "First page header logo", even: "Even page header logo" },
  footer: { default: "Footer logo" },
  comment: "Comment picture",
};

/**
 * A .docx whose default, first-page and even-page headers and default footer each hold only a
 * picture, and whose one comment holds only a picture.
 */
export async function picturePartsDocx(): Promise<Buffer> {
  const doc = new Document({
    evenAndOddHeaderAndFooters: true,
    comments: { children: [{ id: 0, author: "Reviewer", children: [picture(PART_PICTURES.comment)] }] },
    sections: [
      {
        properties: { titlePage: true },
        headers: {
          default: new Header({ children: [picture(PART_PICTURES.header.default)] }),
          first: new Header({ children: [picture(PART_PICTURES.header.first)] }),
          even: new Header({ children: [picture(PART_PICTURES.header.even)] }),
        },
        footers: { default: new Footer({ children: [picture(PART_PICTURES.footer.default)] }) },
        children: [
          new Paragraph({
            children: [
              new CommentRangeStart(0),
              new TextRun("Commented body text."),
              new CommentRangeEnd(0),
              new TextRun({ children: [new CommentReference(0)] }),
            ],
          }),
          new Paragraph("A second body paragraph."),
        ],
      },
    ],
  });
  return Buffer.from(await Packer.toBuffer(doc));
}

/**
 * A .docx with symbol-font text as Word stores it: Greek letters in Symbol (U+F061...), a
 * Wingdings check box and check mark, a Wingdings glyph no table maps (U+F021), a `w:sym`
 * bullet, and a footer whose Wingdings check mark is its only text.
 */
export async function symbolFontsDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        footers: {
          default: new Footer({
            children: [new Paragraph({ children: [new TextRun({ text: "\uF0FC", font: "Wingdings" })] })],
          }),
        },
        children: [
          new Paragraph({
            children: [new TextRun("Angle "), new TextRun({ text: "\uF061\uF020\uF0B3\uF020\uF070", font: "Symbol" })],
          }),
          new Paragraph({
            children: [
              new TextRun({ text: "\uF0FE", font: "Wingdings" }),
              new TextRun(" Approved "),
              new TextRun({ text: "\uF0FC", font: "Wingdings" }),
            ],
          }),
          new Paragraph({
            children: [
              new TextRun("Pencil "),
              new TextRun({ text: "\uF021", font: "Wingdings" }),
              new TextRun(" here"),
            ],
          }),
          new Paragraph({
            children: [new SymbolRun({ char: "F0B7", symbolfont: "Symbol" }), new TextRun(" Bullet by w:sym")],
          }),
        ],
      },
    ],
  });
  return Buffer.from(await Packer.toBuffer(doc));
}
