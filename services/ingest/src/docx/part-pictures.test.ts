// Pictures that are the only content of a header (default, first, even), a footer or a comment
// (issue #32, part 2, Word side): kept on upload as `<img>` with their alt text, kept through an
// edit by both exports.
import { sanitizeHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { writeDocxInPlace } from "../export/docx-in-place.js";
import { htmlToDocx } from "../export/to-docx.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import { PART_PICTURES, picturePartsDocx, RED_PNG } from "../testing/fidelity-docs.js";
import { inPlaceSource } from "../testing/in-place-source.js";

const LAYOUT = {
  widthIn: 8.5,
  heightIn: 11,
  orientation: "portrait" as const,
  margins: { top: 1, right: 1, bottom: 1, left: 1 },
  paperName: "Letter" as const,
};

async function parts(bytes: Buffer, pattern: RegExp): Promise<Map<string, string>> {
  const zip = await JSZip.loadAsync(bytes);
  const out = new Map<string, string>();
  for (const name of Object.keys(zip.files)
    .filter((n) => pattern.test(n))
    .sort())
    out.set(name, (await zip.file(name)?.async("string")) ?? "");
  return out;
}

async function load() {
  const bytes = await picturePartsDocx();
  const { converted, chunks, source } = await inPlaceSource(bytes, "pictures.docx");
  return { bytes, html: converted.html, chunks, source };
}

describe("pictures that are a part's only content", () => {
  it("imports each header's, the footer's and the comment's picture as an <img> the sanitizer keeps", async () => {
    const { html } = await load();
    // The sanitizer closes void elements (" />"); compared without that.
    const clean = sanitizeHtml(html).replace(/\s*\/>/g, ">");
    const dataUrl = `data:image/png;base64,${RED_PNG.toString("base64")}`;
    for (const [variant, alt] of Object.entries(PART_PICTURES.header))
      expect(clean).toContain(`data-part="header" data-variant="${variant}"><img src="${dataUrl}" alt="${alt}">`);
    expect(clean).toContain(
      `data-part="footer" data-variant="default"><img src="${dataUrl}" alt="${PART_PICTURES.footer.default}">`,
    );
    expect(clean).toMatch(
      new RegExp(
        `data-part="comment"[^>]*><img src="${dataUrl.replace(/[+/]/g, "\\$&")}" alt="${PART_PICTURES.comment}">`,
      ),
    );
  });

  it("keeps them byte for byte on the in-place export of a body edit, and keeps a header's picture when its text is edited", async () => {
    const { bytes, chunks, source } = await load();
    const edited = chunks.map((c) =>
      c.html.replace(">A second body paragraph.<", ">A second body paragraph, edited.<"),
    );
    const written = await writeDocxInPlace(edited.join("\n"), source);
    expect(await parts(written.bytes, /^word\/(header|footer|comments)\d*\.xml$/)).toEqual(
      await parts(bytes, /^word\/(header|footer|comments)\d*\.xml$/),
    );
    // Text added beside the default header's picture: the picture's drawing stays in the part.
    const header = chunks.find((c) => c.html.includes(PART_PICTURES.header.default));
    if (!header) throw new Error("no header chunk");
    const withText = chunks.map((c) => (c === header ? c.html.replace(/(<img[^>]*>)/, "$1 Confidential") : c.html));
    const again = await writeDocxInPlace(withText.join("\n"), source);
    const headers = await parts(again.bytes, /^word\/header\d*\.xml$/);
    const changed = [...headers.entries()].filter(([, xml]) => /Confidential/.test(xml));
    expect(changed).toHaveLength(1);
    expect(changed[0][1]).toMatch(/<w:drawing>[\s\S]*r:embed="[^"]+"[\s\S]*<\/w:drawing>/);
    const back = await convertDocx(again.bytes, "back.docx", DEFAULT_LIMITS);
    expect(back.html).toMatch(new RegExp(`<img [^>]*alt="${PART_PICTURES.header.default}">\\s*Confidential`));
  });

  it("writes them into the generated export's headers, footer and comment", async () => {
    const { html } = await load();
    const { bytes } = await htmlToDocx({
      html: sanitizeHtml(html),
      title: "Pictures",
      layout: LAYOUT,
      images: new Map(),
    });
    const written = await parts(bytes, /^word\/(header|footer)\d*\.xml$|^word\/comments\.xml$/);
    const withDrawing = [...written.entries()].filter(([, xml]) => /<w:drawing>/.test(xml)).map(([name]) => name);
    expect(withDrawing.filter((n) => n.includes("header"))).toHaveLength(3);
    expect(withDrawing.filter((n) => n.includes("footer"))).toHaveLength(1);
    expect(withDrawing).toContain("word/comments.xml");
  });

  it("keeps the corpus's comment picture (python-docx comments-rich-para)", async () => {
    const { html } = await convertDocx(readCorpus("docx/pydocx-comments-rich-para.docx"), "c.docx", DEFAULT_LIMITS);
    expect(sanitizeHtml(html)).toMatch(
      /data-part="comment"[^>]*>(?:(?!<\/p>)[\s\S])*?<img src="data:image\/(png|jpeg|gif)/,
    );
  });
});
