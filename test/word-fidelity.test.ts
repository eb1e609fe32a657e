// Word fidelity end to end (issue #32): Word numbering (startOverride, lvlOverride, a clause list
// continued after another list), alignment, a repeating-section content control edited through a
// save and exported in place, and pictures that are a header's, footer's or comment's only
// content, through the real gateway, services, Postgres, NATS and S3. The files are built in the
// test (services/ingest/src/testing/fidelity-docs.ts).
import {
  contractDocx,
  loadHtml,
  PART_PICTURES,
  picturePartsDocx,
  REPEATING_SECTION_XML,
  repeatingSectionDocx,
  SECTION_PARAGRAPHS,
  STYLE_NUMBERED,
} from "@redline/ingest";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { postMultipart } from "./support/multipart.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "word-fidelity" }, "wanda"));
});
afterAll(async () => {
  await stack?.close();
});

async function upload(filename: string, bytes: Buffer) {
  const res = await postMultipart(stack, "/v1/documents/upload", key, {
    file: { bytes, filename },
    return_html: "true",
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { session_id: string; document_id: string; html: string; warnings: string[] };
}

async function save(up: { session_id: string; document_id: string }, html: string): Promise<void> {
  const res = await stack.call("POST", `/v1/sessions/${up.session_id}/documents/${up.document_id}/save`, {
    key,
    body: { html },
  });
  expect(res.status).toBe(200);
}

async function exportDocx(sessionId: string): Promise<{ zip: JSZip; warnings: string[] }> {
  const res = await stack.call("POST", "/v1/documents/export", {
    key,
    body: { session_id: sessionId, format: "docx" },
  });
  expect(res.status).toBe(200);
  const header = res.headers.get("x-export-warnings");
  const warnings = header ? (JSON.parse(Buffer.from(header, "base64").toString("utf8")) as string[]) : [];
  return { zip: await JSZip.loadAsync(Buffer.from(await res.arrayBuffer())), warnings };
}

const paragraphTexts = (xml: string) =>
  (xml.match(/<w:p\b[^>]*?(?<!\/)>[\s\S]*?<\/w:p>/g) ?? []).map((p) =>
    [...p.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(""),
  );

describe("Word fidelity through the stack", () => {
  it("stores Word's numbering and alignment, and the txt export numbers the clauses as Word does", async () => {
    const up = await upload("contract.docx", await contractDocx());
    const $ = loadHtml(up.html);
    const listOf = (text: string) =>
      $("li")
        .filter((_, li) => $(li).contents().first().text() === text)
        .parent();
    expect(listOf("Termination").attr("start")).toBe("17");
    expect([listOf("Annex").attr("type"), listOf("Annex").attr("start")]).toEqual(["A", "3"]);
    expect(listOf("Payment").children("li")).toHaveLength(3);
    expect(
      $("p")
        .filter((_, p) => $(p).text() === "MASTER SERVICES AGREEMENT")
        .attr("style"),
    ).toBe("text-align: center");
    const txt = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: up.session_id, format: "txt" },
    });
    expect(txt.status).toBe(200);
    const lines = (await txt.text()).split("\n");
    for (const line of ["3. Payment", "17. Termination", "C. Annex", `${STYLE_NUMBERED.label} ${STYLE_NUMBERED.text}`])
      expect(lines).toContain(line);
  });

  it("keeps a repeating section's four paragraphs and its control when one is edited and exported in place", async () => {
    const up = await upload("section.docx", await repeatingSectionDocx());
    await save(up, up.html.replace(`>${SECTION_PARAGRAPHS[0]}<`, `>${SECTION_PARAGRAPHS[0]} Amended.<`));
    const { zip, warnings } = await exportDocx(up.session_id);
    expect(warnings).toEqual([]);
    const xml = (await zip.file("word/document.xml")?.async("string")) ?? "";
    expect(paragraphTexts(xml)).toEqual([
      "Before the section.",
      `${SECTION_PARAGRAPHS[0]} Amended.`,
      ...SECTION_PARAGRAPHS.slice(1),
      "After the section.",
    ]);
    expect(xml.match(/<w15:repeatingSection\/>/g)).toHaveLength(1);
    expect(xml.match(/<w15:repeatingSectionItem\/>/g)).toHaveLength(2);
    // The control's own properties are the original bytes.
    expect(xml).toContain(REPEATING_SECTION_XML.slice(0, REPEATING_SECTION_XML.indexOf("<w:sdtContent>")));
  });

  it("keeps pictures that are a header's, footer's or comment's only content through upload, edit and export", async () => {
    const bytes = await picturePartsDocx();
    const up = await upload("pictures.docx", bytes);
    const $ = loadHtml(up.html);
    for (const alt of [...Object.values(PART_PICTURES.header), PART_PICTURES.footer.default, PART_PICTURES.comment]) {
      const img = $(`img[alt="${alt}"]`);
      expect(img).toHaveLength(1);
      expect(img.attr("src")).toMatch(/^data:image\/png;base64,|^\/v1\/media\/[0-9a-f]{64}$/);
      expect(img.closest("[data-part]").length).toBe(1);
    }
    await save(up, up.html.replace(">A second body paragraph.<", ">A second body paragraph, edited.<"));
    const { zip } = await exportDocx(up.session_id);
    const original = await JSZip.loadAsync(bytes);
    for (const name of Object.keys(original.files).filter((n) =>
      /^word\/(header\d*|footer\d*|comments)\.xml$/.test(n),
    )) {
      const part = await zip.file(name)?.async("string");
      expect(part, name).toBe(await original.file(name)?.async("string"));
      expect(part).toContain("<w:drawing>");
    }
    expect(paragraphTexts((await zip.file("word/document.xml")?.async("string")) ?? "")).toContain(
      "A second body paragraph, edited.",
    );
  });
});
