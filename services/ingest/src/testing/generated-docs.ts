// Test helpers: documents generated in the test for what the corpus lacks — Word lists starting
// at 17 or counting in letters and roman numerals, hidden (w:vanish) text, RTFs whose fonts
// declare a code page, an RTF footer holding a table.
import { Document, LevelFormat, Packer, Paragraph, TextRun } from "docx";
import iconv from "iconv-lite";

/** The list paragraphs of `listsDocx`, as Word numbers them. */
export const LIST_ITEMS = {
  seventeen: ["Seventeenth", "Eighteenth"],
  letters: ["Alpha", "Bravo"],
  romans: ["Roman one", "Roman two"],
  continued: ["Roman three"],
};

/**
 * A .docx with three Word lists: decimal from 17, lowerLetter, upperRoman (interrupted by a
 * paragraph and a table-free paragraph, then continued at III).
 */
export async function listsDocx(): Promise<Buffer> {
  const doc = new Document({
    numbering: {
      config: [
        {
          reference: "from17",
          levels: [{ level: 0, format: LevelFormat.DECIMAL, text: "%1.", start: 17 }],
        },
        { reference: "letters", levels: [{ level: 0, format: LevelFormat.LOWER_LETTER, text: "%1)", start: 1 }] },
        { reference: "romans", levels: [{ level: 0, format: LevelFormat.UPPER_ROMAN, text: "%1.", start: 1 }] },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph("Lists follow."),
          ...LIST_ITEMS.seventeen.map((t) => new Paragraph({ text: t, numbering: { reference: "from17", level: 0 } })),
          new Paragraph("Between the lists."),
          ...LIST_ITEMS.letters.map((t) => new Paragraph({ text: t, numbering: { reference: "letters", level: 0 } })),
          ...LIST_ITEMS.romans.map((t) => new Paragraph({ text: t, numbering: { reference: "romans", level: 0 } })),
          new Paragraph("An interruption of the roman list."),
          ...LIST_ITEMS.continued.map((t) => new Paragraph({ text: t, numbering: { reference: "romans", level: 0 } })),
        ],
      },
    ],
  });
  return Buffer.from(await Packer.toBuffer(doc));
}

/** The hidden words of `hiddenDocx` and the paragraph they hide in. */
export const HIDDEN = { visible: "Visible start ", hidden: "secret reviewer note", after: " visible end." };

/** A .docx whose one paragraph has a hidden (w:vanish) run between two visible ones. */
export async function hiddenDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({
            children: [
              new TextRun(HIDDEN.visible),
              new TextRun({ text: HIDDEN.hidden, vanish: true, bold: true }),
              new TextRun(HIDDEN.after),
            ],
          }),
          new Paragraph("A plain paragraph."),
        ],
      },
    ],
  });
  return Buffer.from(await Packer.toBuffer(doc));
}

/** `text` as Word writes it for a font of another charset: every byte a `\'hh` escape. */
export function rtfHex(text: string, codepage: string): string {
  return [...iconv.encode(text, codepage)].map((b) => `\\'${b.toString(16).padStart(2, "0")}`).join("");
}

/** Texts of `codepageRtf`, one paragraph each. */
export const CODEPAGE_TEXTS = { japanese: "日本語のテキスト", chinese: "简体中文", russian: "Привет, мир" };

/**
 * An RTF whose paragraphs are in Shift_JIS (`\fcharset128`), GBK (`\fcharset134`) and
 * Windows-1251 (`\fcharset204`), written only as `\'hh` bytes (no `\uN`), with a footer that
 * holds a line and a two-cell table.
 */
export function codepageRtf(): Buffer {
  const fonts =
    "{\\fonttbl{\\f0\\froman\\fcharset0 Times New Roman;}{\\f1\\fnil\\fcharset128 MS Mincho;}" +
    "{\\f2\\fnil\\fcharset134 SimSun;}{\\f3\\fswiss\\fcharset204 Arial Cyr;}}";
  const footer =
    "{\\footer\\pard\\plain Footer line\\par\\trowd\\cellx3000\\cellx6000" +
    "\\pard\\intbl Footer cell A\\cell\\pard\\intbl Footer cell B\\cell\\row\\pard\\par}";
  const body = [
    `{\\f1 ${rtfHex(CODEPAGE_TEXTS.japanese, "shift_jis")}}`,
    `{\\f2 ${rtfHex(CODEPAGE_TEXTS.chinese, "gbk")}}`,
    `{\\f3 ${rtfHex(CODEPAGE_TEXTS.russian, "cp1251")}}`,
  ]
    .map((p) => `\\pard ${p}\\par\n`)
    .join("");
  return Buffer.from(
    `{\\rtf1\\ansi\\ansicpg1252\\deff0${fonts}\n${footer}\n\\pard Body start\\par\n${body}}`,
    "latin1",
  );
}
