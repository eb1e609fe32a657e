import { chunkHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { DEFAULT_LIMITS } from "../formats.js";
import { readCorpus } from "../testing/corpus.js";
import { writeDocxInPlace } from "./docx-in-place.js";
import { resolveLayout } from "./export-formats.js";
import { htmlToDocx } from "./to-docx.js";
import { writeZip } from "./zip-writer.js";

const PNG_2X3 =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP4z8DAwMDAxAADAAnyAQWTYV1AAAAAAElFTkSuQmCC";
const png = () => Buffer.from(PNG_2X3.split(",")[1], "base64");

/** Entry names as the ZIP's central directory lists them (read by hand: no library's view of folders). */
function centralNames(zip: Buffer): string[] {
  const names: string[] = [];
  for (let at = zip.indexOf("PK\x01\x02", 0, "latin1"); at >= 0; at = zip.indexOf("PK\x01\x02", at + 46, "latin1")) {
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    names.push(zip.subarray(at + 46, at + 46 + nameLength).toString("utf8"));
    at += extraLength + commentLength + nameLength;
  }
  return names;
}

describe("export ZIP packages hold file entries only", () => {
  it("writeZip leaves out the folder entries JSZip adds for a new part's path", async () => {
    const zip = new JSZip();
    zip.file("[Content_Types].xml", "<Types/>");
    zip.file("word/media/deep/image1.png", png());
    expect(Object.keys(zip.files)).toContain("word/media/");
    const names = centralNames(await writeZip(zip));
    expect(names.sort()).toEqual(["[Content_Types].xml", "word/media/deep/image1.png"]);
  });

  it("an in-place export that adds a picture gains its media part and no directory entries", async () => {
    const bytes = readCorpus("docx/tika-testWORD_various.docx");
    const converted = await convertDocx(bytes, "various.docx", DEFAULT_LIMITS, { keepSource: true });
    if (!converted.source) throw new Error("the various docx has a source map");
    const { chunks } = chunkHtml(converted.html);
    const added = `<p data-chunk-id="c_newpicture1">Logo: <img src="${PNG_2X3}" alt="logo"></p>`;
    const html = [chunks[0].html, added, ...chunks.slice(1).map((c) => c.html)].join("\n");
    const written = await writeDocxInPlace(
      html,
      {
        bytes,
        format: "docx",
        map: converted.source.map,
        loaded: Object.fromEntries(chunks.map((c) => [c.chunkId, c.html])),
      },
      {
        images: (src) => (src.startsWith("data:") ? png() : undefined),
      },
    );
    const before = centralNames(bytes);
    const after = centralNames(written.bytes);
    expect(before.filter((n) => n.endsWith("/"))).toEqual([]);
    expect(after.filter((n) => n.endsWith("/"))).toEqual([]);
    const gained = after.filter((n) => !before.includes(n));
    expect(gained).toHaveLength(1);
    expect(gained[0]).toMatch(/^word\/media\/redline-[0-9a-f]{16}\.png$/);
    expect(before.filter((n) => !after.includes(n))).toEqual([]);
  });

  it("a generated docx export, with a picture, a comment and a tracked change, has no directory entries", async () => {
    const html = [
      '<p data-chunk-id="c_aaaaaaaaa1">Intro <img src="/v1/media/x" alt="logo"></p>',
      '<p data-chunk-id="c_aaaaaaaaa2">Pay within 45 days.</p>',
      '<p data-chunk-id="c_aaaaaaaaa3" data-part="comment" data-anchor="Intro" data-author="Ann">Check this</p>',
    ].join("\n");
    const built = await htmlToDocx({
      html,
      title: "t",
      layout: resolveLayout({}, null),
      images: new Map([["/v1/media/x", png()]]),
      trackedChanges: [
        {
          chunkId: "c_aaaaaaaaa2",
          kind: "modified",
          baseHtml: '<p data-chunk-id="c_aaaaaaaaa2">Pay within 30 days.</p>',
          afterChunkId: "",
          author: "Redline",
          date: new Date("2026-01-02T03:04:05Z"),
        },
      ],
    });
    const names = centralNames(built.bytes);
    expect(names).toContain("word/document.xml");
    expect(names.filter((n) => n.endsWith("/"))).toEqual([]);
  });
});
