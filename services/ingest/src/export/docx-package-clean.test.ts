// The in-place writer cleans what a hostile upload carries (issue #30): unsafe zip entry names
// and external relationships Word would fetch or that point at local files. The hostile package
// is the corpus's tika-testWORD_various.docx with such entries and links added (built with
// JSZip, which writes entry names as given); the written package is read back by its zip
// directory, so the names asserted are the names any unzip tool sees.
import { chunkHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { convertDocx } from "../converters/docx.js";
import { checkZip } from "../docx/zip-guard.js";
import { DEFAULT_LIMITS } from "../formats.js";
import type { DocumentSource } from "../sources/types.js";
import { readCorpus } from "../testing/corpus.js";
import { writeDocxInPlace } from "./docx-in-place.js";
import { describeAddress, unsafeRelationship, withoutReferences } from "./docx-package-links.js";
import { loadPackage, normalizeEntryName } from "./docx-package-names.js";

const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
// A 2 x 3 pixel PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP4z8DAwMDAxAADAAnyAQWTYV1AAAAAAElFTkSuQmCC",
  "base64",
);
const LONG_JS = `javascript:alert(1)//${"A".repeat(500)}`;
const JUNK_STYLES = `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>`;

const rel = (id: string, type: string, target: string, external = true) =>
  `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"${external ? ' TargetMode="External"' : ""}/>`;
const link = (id: string, text: string) =>
  `<w:p><w:r><w:t xml:space="preserve">See </w:t></w:r><w:hyperlink r:id="${id}" w:history="1"><w:r><w:t>${text}</w:t></w:r></w:hyperlink></w:p>`;
const picture = `<w:p><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="19050" cy="28575"/><wp:docPr id="901" name="Picture 901"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="901" name="pixel.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rIdE1" r:link="rIdI1"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="19050" cy="28575"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;

/** File entry name → bytes, in directory order, exactly as stored (duplicates and unsafe names included; folders apart). */
function rawEntries(bytes: Buffer): [string, Buffer][] {
  const zip = checkZip(bytes, DEFAULT_LIMITS_ZIP, ".docx");
  // read() takes a name, and an exact duplicate name reads as its last copy; names here are only listed.
  return zip.entries.filter((e) => !e.name.endsWith("/")).map((e) => [e.name, zip.read(e.name) ?? Buffer.alloc(0)]);
}
const DEFAULT_LIMITS_ZIP = {
  maxEntries: DEFAULT_LIMITS.maxZipEntries,
  maxUncompressedBytes: DEFAULT_LIMITS.maxUncompressedBytes,
  maxCompressionRatio: DEFAULT_LIMITS.maxCompressionRatio,
};

/**
 * tika-testWORD_various.docx made hostile: docProps/app.xml stored as `/docProps/app.xml`, a
 * picture as `word\media\pixel.png`, an extra `../../evil.sh`, a second (junk) styles part as
 * `word/../word/styles.xml`; body paragraphs linking file:///, a UNC path, a long javascript:
 * address and http (kept); the picture linked to an http copy besides its embedded one; an https
 * attached template in settings.xml.
 */
async function hostileDocx(): Promise<{ bytes: Buffer; original: JSZip }> {
  const original = await JSZip.loadAsync(readCorpus("docx/tika-testWORD_various.docx"));
  const zip = await JSZip.loadAsync(readCorpus("docx/tika-testWORD_various.docx"));
  const text = async (name: string) => (await zip.file(name)?.async("string")) ?? "";
  const put = (name: string, data: string | Buffer) => zip.file(name, data, { createFolders: false });

  const app = (await zip.file("docProps/app.xml")?.async("nodebuffer")) as Buffer;
  zip.remove("docProps/app.xml");
  put("/docProps/app.xml", app);
  put("word\\media\\pixel.png", PNG);
  put("../../evil.sh", "#!/bin/sh\necho owned\n");
  put("word/../word/styles.xml", JUNK_STYLES);
  put(
    "[Content_Types].xml",
    (await text("[Content_Types].xml")).replace(
      /(<Types\b[^>]*>)/,
      '$1<Default Extension="png" ContentType="image/png"/>',
    ),
  );
  put(
    "word/_rels/document.xml.rels",
    (await text("word/_rels/document.xml.rels")).replace(
      "</Relationships>",
      [
        rel("rIdF1", "hyperlink", "file:///etc/passwd"),
        rel("rIdU1", "hyperlink", "\\\\attacker.example\\share\\doc.docx"),
        rel("rIdJ1", "hyperlink", LONG_JS),
        rel("rIdH1", "hyperlink", "http://example.com/kept"),
        rel("rIdI1", "image", "http://tracker.example/pixel.png"),
        rel("rIdE1", "image", "media/pixel.png", false),
      ].join("") + "</Relationships>",
    ),
  );
  const paragraphs = [
    link("rIdF1", "local file"),
    link("rIdU1", "share link"),
    link("rIdJ1", "script link"),
    link("rIdH1", "kept link"),
    picture,
  ].join("");
  put("word/document.xml", (await text("word/document.xml")).replace("<w:body>", `<w:body>${paragraphs}`));
  put(
    "word/settings.xml",
    (await text("word/settings.xml"))
      .replace("<w:settings ", `<w:settings xmlns:r="${REL}" `)
      .replace('<w:zoom w:percent="150"/>', '<w:zoom w:percent="150"/><w:attachedTemplate r:id="rIdT1"/>'),
  );
  put(
    "word/_rels/settings.xml.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rel("rIdT1", "attachedTemplate", "https://templates.example/corp.dotm")}</Relationships>`,
  );
  return { bytes: await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }), original };
}

/** Converts `bytes` the way an upload does and builds the DocumentSource the documents service hands over. */
async function load(bytes: Buffer): Promise<{ source: DocumentSource; chunks: { chunkId: string; html: string }[] }> {
  const converted = await convertDocx(bytes, "hostile.docx", DEFAULT_LIMITS, { keepSource: true });
  if (!converted.source) throw new Error("no source map");
  const { chunks } = chunkHtml(converted.html);
  const loaded = Object.fromEntries(chunks.map((c) => [c.chunkId, c.html]));
  return { source: { format: "docx", bytes, map: converted.source.map, loaded }, chunks };
}

const html = (chunks: { html: string }[]) => chunks.map((c) => c.html).join("\n");

/** Every relationship id a part names (r:id, r:embed, r:link, ...) that its relationships part does not hold. */
async function danglingIds(zip: JSZip): Promise<string[]> {
  const out: string[] = [];
  for (const [name, file] of Object.entries(zip.files)) {
    const m = /^((?:[^/]*\/)*)_rels\/([^/]*)\.rels$/.exec(name);
    if (file.dir || !m || !m[2]) continue;
    const part = await zip.file(m[1] + m[2])?.async("string");
    if (part === undefined) continue;
    const ids = new Set([...(await file.async("string")).matchAll(/\sId="([^"]*)"/g)].map((x) => x[1]));
    for (const ref of part.matchAll(/\sr:[\w]+="([^"]*)"/g))
      if (!ids.has(ref[1])) out.push(`${m[1] + m[2]}: ${ref[1]}`);
  }
  return out;
}

describe("an uploaded package written back in place is cleaned", () => {
  it("normalizes entry names, drops colliding entries and unsafe links with their references, keeps everything else", async () => {
    const { bytes, original } = await hostileDocx();
    const input = rawEntries(bytes);
    expect(input.map(([n]) => n)).toEqual(
      expect.arrayContaining([
        "/docProps/app.xml",
        "word\\media\\pixel.png",
        "../../evil.sh",
        "word/../word/styles.xml",
      ]),
    );
    const doc = await load(bytes);
    const written = await writeDocxInPlace(html(doc.chunks), doc.source);
    const output = rawEntries(written.bytes);
    const names = output.map(([n]) => n);

    // Names: relative, forward slashes, no `..`, no two alike (case apart).
    for (const name of names) {
      expect(name).not.toMatch(/^\/|\\|(^|\/)\.\.(\/|$)/);
    }
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(["docProps/app.xml", "word/media/pixel.png", "evil.sh"]));
    const out = new Map(output);
    // The first styles part stays, the later duplicate is left out; renamed parts keep their bytes.
    expect(
      out.get("word/styles.xml")?.equals((await original.file("word/styles.xml")?.async("nodebuffer")) as Buffer),
    ).toBe(true);
    expect(
      out.get("docProps/app.xml")?.equals((await original.file("docProps/app.xml")?.async("nodebuffer")) as Buffer),
    ).toBe(true);
    expect(out.get("word/media/pixel.png")?.equals(PNG)).toBe(true);
    // The renamed parts are found where the package names them: the override and the targets resolve.
    const zip = await JSZip.loadAsync(written.bytes);
    const types = (await zip.file("[Content_Types].xml")?.async("string")) ?? "";
    expect(types).toContain('PartName="/docProps/app.xml"');
    expect(await zip.file("_rels/.rels")?.async("string")).toContain('Target="docProps/app.xml"');

    // Relationships: the unsafe ones are gone, with every reference to them; the rest stay.
    const rels = (await zip.file("word/_rels/document.xml.rels")?.async("string")) ?? "";
    for (const id of ["rIdF1", "rIdU1", "rIdJ1", "rIdI1"]) expect(rels).not.toContain(`Id="${id}"`);
    expect(rels).toContain(rel("rIdH1", "hyperlink", "http://example.com/kept"));
    expect(rels).toContain(rel("rIdE1", "image", "media/pixel.png", false));
    expect(rels).toContain('Target="http://tika.apache.org/"');
    const documentXml = (await zip.file("word/document.xml")?.async("string")) ?? "";
    for (const id of ["rIdF1", "rIdU1", "rIdJ1", "rIdI1"]) expect(documentXml).not.toContain(`"${id}"`);
    for (const text of ["local file", "share link", "script link"])
      expect(documentXml).toContain(`<w:hyperlink w:history="1"><w:r><w:t>${text}</w:t></w:r></w:hyperlink>`);
    expect(documentXml).toContain(
      `<w:hyperlink r:id="rIdH1" w:history="1"><w:r><w:t>kept link</w:t></w:r></w:hyperlink>`,
    );
    expect(documentXml).toContain('<a:blip r:embed="rIdE1"/>');
    const settings = (await zip.file("word/settings.xml")?.async("string")) ?? "";
    expect(settings).not.toContain("attachedTemplate");
    expect(settings).toContain('<w:zoom w:percent="150"/><w:defaultTabStop');
    expect(await zip.file("word/_rels/settings.xml.rels")?.async("string")).not.toContain("rIdT1");
    expect(await danglingIds(zip)).toEqual([]);

    // Warnings: each kind once, in general terms, never the attacker's long address.
    const w = written.warnings;
    expect(w).toContainEqual(
      expect.stringMatching(
        /^Removed 3 links to local files, network shares or unsafe addresses \(file:, \\\\attacker\.example, javascript:\)/,
      ),
    );
    expect(w).toContainEqual(expect.stringMatching(/^Removed 1 attached template \(https:\/\/templates\.example\)/));
    expect(w).toContainEqual(expect.stringMatching(/^Removed 1 linked picture \(http:\/\/tracker\.example\)/));
    expect(w).toContainEqual(expect.stringMatching(/^4 entries of the Word package had an unsafe name/));
    expect(w).toContainEqual(
      expect.stringMatching(/^1 entry of the Word package repeated the name of another entry and was left out/),
    );
    for (const warning of w) {
      expect(warning.length).toBeLessThan(220);
      expect(warning).not.toMatch(/passwd|AAAA|alert/);
    }

    // Every other part is the upload's own bytes.
    const cleaned = new Set([
      "word/document.xml",
      "word/_rels/document.xml.rels",
      "word/settings.xml",
      "word/_rels/settings.xml.rels",
    ]);
    const renamed: Record<string, string> = {
      "/docProps/app.xml": "docProps/app.xml",
      "word\\media\\pixel.png": "word/media/pixel.png",
      "../../evil.sh": "evil.sh",
    };
    for (const [name, data] of input) {
      if (cleaned.has(name) || name === "word/../word/styles.xml") continue;
      expect(out.get(renamed[name] ?? name)?.equals(data), name).toBe(true);
    }
    expect(names.filter((n) => !cleaned.has(n)).sort()).toEqual(
      input
        .map(([n]) => renamed[n] ?? n)
        .filter((n) => !cleaned.has(n) && n !== "word/../word/styles.xml")
        .sort(),
    );
    // Only the cleaned references changed in the body: every block is the upload's but those four.
    const before = (await JSZip.loadAsync(bytes)).file("word/document.xml")?.async("string");
    expect(documentXml.replace(/ r:link="rIdI1"| r:id="rId[FUJ]1"/g, "")).toBe(
      ((await before) ?? "").replace(/ r:link="rIdI1"| r:id="rId[FUJ]1"/g, ""),
    );

    // The cleaned package reads back through the upload path.
    const back = await convertDocx(written.bytes, "back.docx", DEFAULT_LIMITS, { keepSource: true });
    expect(back.html).toContain('<a href="http://example.com/kept">kept link</a>');
  });

  it("an edit changes only its own block on top of the cleaning", async () => {
    const { bytes } = await hostileDocx();
    const doc = await load(bytes);
    const untouched = await writeDocxInPlace(html(doc.chunks), doc.source);
    const target = doc.chunks.find((c) => c.html.includes("kept link"));
    if (!target) throw new Error("no kept-link paragraph");
    const edited = doc.chunks.map((c) => (c === target ? { ...c, html: c.html.replace("See ", "Now see ") } : c));
    const written = await writeDocxInPlace(html(edited), doc.source);
    const a = new Map(rawEntries(untouched.bytes));
    const b = new Map(rawEntries(written.bytes));
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    expect([...a].filter(([n, data]) => !b.get(n)?.equals(data)).map(([n]) => n)).toEqual(["word/document.xml"]);
    expect(b.get("word/document.xml")?.toString("utf8")).toContain("Now see ");
    expect(written.warnings).toEqual(untouched.warnings);
  });

  it("returns a package with nothing to clean as uploaded, byte for byte", async () => {
    const bytes = readCorpus("docx/tika-testWORD_various.docx");
    const doc = await load(bytes);
    const written = await writeDocxInPlace(html(doc.chunks), doc.source);
    expect(written.bytes.equals(bytes)).toBe(true);
    expect(written.warnings).toEqual([]);
    expect((await loadPackage(bytes)).changed).toBe(false);
  });

  it("keeps the entry already under the normalized name over one renamed to it, whatever their order", async () => {
    const zip = new JSZip();
    zip.file("/word/document.xml", "renamed", { createFolders: false });
    zip.file("word/document.xml", "exact", { createFolders: false });
    zip.file("Word\\Document.xml", "case", { createFolders: false });
    const pkg = await loadPackage(await zip.generateAsync({ type: "nodebuffer" }));
    expect(Object.keys(pkg.zip.files)).toEqual(["word/document.xml"]);
    expect(await pkg.zip.file("word/document.xml")?.async("string")).toBe("exact");
    expect(pkg.warnings).toHaveLength(2);
  });
});

describe("entry names and addresses", () => {
  it("normalizes zip entry names", () => {
    expect(normalizeEntryName("/word/document.xml")).toBe("word/document.xml");
    expect(normalizeEntryName("word\\media\\a.png")).toBe("word/media/a.png");
    expect(normalizeEntryName("../../etc/cron.d/x")).toBe("etc/cron.d/x");
    expect(normalizeEntryName("word/./a/../b.xml")).toBe("word/b.xml");
    expect(normalizeEntryName("C:\\Windows\\x.dll")).toBe("Windows/x.dll");
    expect(normalizeEntryName("//host/share/x")).toBe("host/share/x");
    expect(normalizeEntryName("..")).toBe("");
  });

  it("keeps http, https, mailto and anchor hyperlinks; drops file, UNC, relative and script addresses", () => {
    const hyperlink = `${REL}/hyperlink`;
    for (const t of ["http://a.example/x", "HTTPS://a.example", "mailto:someone@example.com", "#top"])
      expect(unsafeRelationship(hyperlink, t, true), t).toBeNull();
    for (const t of [
      "file:///C:/x.docx",
      "FILE://host/share",
      "\\\\host\\share\\x",
      "//host/share/x",
      "../x.docx",
      " javascript:alert(1)",
      "java&#x09;script:alert(1)",
      "vbscript:x",
      "data:text/html,x",
      "ms-msdt:/id x",
      "http:\\\\host\\share",
    ])
      expect(unsafeRelationship(hyperlink, t, true), t).not.toBeNull();
  });

  it("keeps only https for what Word fetches, and no attached template at all", () => {
    expect(unsafeRelationship(`${REL}/image`, "https://cdn.example/a.png", true)).toBeNull();
    for (const type of ["image", "oleObject", "subDocument", "frame", "constructor", "audio"])
      for (const t of ["http://a.example/a", "file:///x", "\\\\h\\s", "x.png"])
        expect(unsafeRelationship(`${REL}/${type}`, t, true), `${type} ${t}`).not.toBeNull();
    expect(unsafeRelationship(`${REL}/attachedTemplate`, "https://a.example/t.dotm", true)).not.toBeNull();
    // A part's own target is never touched; an address without TargetMode is still an address.
    expect(unsafeRelationship(`${REL}/image`, "media/a.png", false)).toBeNull();
    expect(unsafeRelationship(`${REL}/attachedTemplate`, "file:///C:/t.dotm", false)).not.toBeNull();
  });

  it("names an address by its scheme and host only, bounded", () => {
    expect(describeAddress("file:///C:/Users/x/Normal.dotm")).toBe("file:");
    expect(describeAddress("\\\\evil.example\\share\\x")).toBe("\\\\evil.example");
    expect(describeAddress(`https://${"h".repeat(300)}.example/x`)).toHaveLength("https://".length + 40);
    expect(describeAddress("report.docx")).toBe("a relative path");
  });

  it("removes an element that needs the id, and the attribute elsewhere", () => {
    const xml = `<w:settings xmlns:w="w" xmlns:rel="${REL}"><w:attachedTemplate rel:id="rId1"/><w:mailMerge><w:dataSource rel:id='rId2'></w:dataSource></w:mailMerge></w:settings><v:imagedata o:relid="rId3" rel:href="rId3"/><a:hlinkClick rel:id="rId3"/>`;
    expect(withoutReferences(xml, new Set(["rId1", "rId2", "rId3"]))).toBe(
      `<w:settings xmlns:w="w" xmlns:rel="${REL}"><w:mailMerge></w:mailMerge></w:settings><v:imagedata/><a:hlinkClick/>`,
    );
  });
});
