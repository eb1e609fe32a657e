// Import fidelity end to end (issue #12): what a reader sees in a Word or RTF file survives the
// upload and is there when the stored document is read back — Word list starts and number
// formats, hidden text kept but out of the txt export, RTF text in a font's code page
// (Shift_JIS, GBK, Cyrillic), and an RTF footer's table kept out of the flow. Real gateway,
// services, Postgres, NATS and S3; the files are generated in the test.

import { CODEPAGE_TEXTS, codepageRtf, HIDDEN, hiddenDocx, LIST_ITEMS, listsDocx, loadHtml } from "@redline/ingest";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jsonCall } from "./support/documents-client.js";
import { postMultipart } from "./support/multipart.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "import-fidelity" });
  key = await stack.createKey("ida");
});
afterAll(async () => {
  await stack?.close();
});

/** Uploads a file into a new session and reads the stored document back: its HTML and the upload's warnings. */
async function uploadAndRead(filename: string, bytes: Buffer) {
  const res = await postMultipart(stack, "/v1/documents/upload", key, { file: { bytes, filename } });
  const body = (await res.json()) as { durable_document_id: string; session_id: string; warnings: string[] };
  expect(res.status).toBe(200);
  const stored = await jsonCall(stack, "GET", `/v1/documents/${body.durable_document_id}?include_html=true`, key);
  expect(stored.status).toBe(200);
  const html = stored.body.html as string;
  return { html, $: loadHtml(html), warnings: body.warnings, sessionId: body.session_id };
}

type Dom = ReturnType<typeof loadHtml>;
// The list holding the item whose text is `text`.
const listOf = ($: Dom, text: string) =>
  $("li")
    .filter((_, li) => $(li).text() === text)
    .parent();

describe("import fidelity", () => {
  it("keeps Word list starts, letter and roman formats, and a list's numbering across an interruption", async () => {
    const { $ } = await uploadAndRead("lists.docx", await listsDocx());
    expect(listOf($, LIST_ITEMS.seventeen[0]).attr("start")).toBe("17");
    expect(listOf($, LIST_ITEMS.letters[0]).attr("type")).toBe("a");
    expect(listOf($, LIST_ITEMS.romans[0]).attr("type")).toBe("I");
    const continued = listOf($, LIST_ITEMS.continued[0]);
    expect([continued.attr("type"), continued.attr("start")]).toEqual(["I", "3"]);
    // Each list is its own chunk; no item is empty.
    expect($("li").filter((_, li) => $(li).text().trim() === "")).toHaveLength(0);
  });

  it("keeps Word's hidden text in the stored document but leaves it out of the txt export", async () => {
    const { $, sessionId } = await uploadAndRead("hidden.docx", await hiddenDocx());
    expect($('span[data-hidden="true"][hidden]').text()).toBe(HIDDEN.hidden);
    const res = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: sessionId, format: "txt" },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(HIDDEN.visible.trim());
    expect(text).not.toContain(HIDDEN.hidden);
  });

  it("reads an RTF's Shift_JIS, GBK and Cyrillic fonts, and keeps its footer table out of the flow", async () => {
    const { $, warnings } = await uploadAndRead("codepages.rtf", codepageRtf());
    const paragraphs = $.root()
      .children("p:not([data-part])")
      .map((_, p) => $(p).text())
      .get();
    expect(paragraphs).toEqual(["Body start", CODEPAGE_TEXTS.japanese, CODEPAGE_TEXTS.chinese, CODEPAGE_TEXTS.russian]);
    expect(warnings.join(" ")).not.toMatch(/could not be decoded/);
    // The footer's table is a footer chunk of its own, after the flow; no table is in the flow.
    const table = $("table");
    expect(table).toHaveLength(1);
    expect(table.attr("data-part")).toBe("footer");
    expect(
      table
        .find("td")
        .map((_, td) => $(td).text())
        .get(),
    ).toEqual(["Footer cell A", "Footer cell B"]);
    expect($.root().children().last().is(table)).toBe(true);
  });

  it("warns, with status 200, when an RTF's bytes cannot be decoded in its font's code page", async () => {
    const rtf = Buffer.from(
      "{\\rtf1\\ansi{\\fonttbl{\\f1\\fcharset128 MS Gothic;}}\\pard\\f1 Broken \\'81\\'7f bytes\\par}",
      "latin1",
    );
    const { warnings } = await uploadAndRead("broken.rtf", rtf);
    expect(warnings.find((w) => /could not be decoded/.test(w))).toMatch(/Shift_JIS/);
  });
});
