// Exports end to end (unshown-parts.md, Export): every format from html, a session's document
// or a pre-signed upload; options applied; warnings in X-Export-Warnings; 422 for other formats;
// 413 as rule 6 over the format cap; the docx round trip keeps structure and images; downloads
// and the email fallback through a scripted SMTP server over real SMTP.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { corpusFile } from "./support/fixtures.js";
import { type ScriptedSmtp, startScriptedSmtp } from "./support/scripted-smtp.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let otherKey: string;
let smtp: ScriptedSmtp;

const SAMPLE = `<h1>Service Terms</h1>
<p>The <strong>Supplier</strong> shall deliver <em>on time</em> and <u>in full</u>, see <a href="https://example.com/terms">terms</a>.</p>
<ol start="3"><li>Third</li><li>Fourth<ul><li>Nested</li></ul></li></ol>
<table><tr><th>Plan</th><th>Price</th></tr><tr><td colspan="2">Merged row</td></tr><tr><td>Pro</td><td>$20</td></tr></table>
<p data-part="footer">Confidential</p>`;

beforeAll(async () => {
  smtp = await startScriptedSmtp();
  stack = await startTestStack(inject("infra"), {
    name: "exports",
    ingest: { exportMaxMb: { txt: 0.0005 }, mail: { smtpUrl: smtp.url } },
  });
  [key, otherKey] = await Promise.all([stack.createKey("eve@example.com"), stack.createKey("mallory")]);
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

async function exportDoc(body: Record<string, unknown>, k = key) {
  const res = await stack.call("POST", "/v1/documents/export", { key: k, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const warningsHeader = res.headers.get("x-export-warnings");
  return {
    status: res.status,
    bytes,
    type: res.headers.get("content-type") ?? "",
    disposition: res.headers.get("content-disposition") ?? "",
    warnings: warningsHeader ? (JSON.parse(Buffer.from(warningsHeader, "base64").toString("utf8")) as string[]) : null,
    json: () => JSON.parse(bytes.toString("utf8")) as { detail: unknown },
  };
}

async function reimport(bytes: Buffer, filename = "again.docx"): Promise<string> {
  const res = await stack.call("POST", "/v1/documents/upload-base64", {
    key,
    body: { filename, file_base64: bytes.toString("base64") },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { html: string }).html;
}

/** Structure counts that must survive a round trip. */
function structure(html: string) {
  const count = (re: RegExp) => (html.match(re) ?? []).length;
  return {
    tables: count(/<table\b/g),
    merges: count(/\s(?:colspan|rowspan)="[2-9]"/g),
    items: count(/<li\b/g),
    headings: count(/<h[1-6]\b/g),
    // Bold or italic runs of only whitespace carry nothing and are not kept.
    strong: count(/<strong>(?!\s*<\/strong>)/g),
    em: count(/<em>(?!\s*<\/em>)/g),
    footnotes: count(/id="footnote-\d+"/g),
    starts: (html.match(/<ol start="\d+"/g) ?? []).join(","),
  };
}

describe("POST /v1/documents/export", () => {
  it("exports docx with Word structure that reads back", async () => {
    const res = await exportDoc({ html: SAMPLE, format: "docx", filename: "terms" });
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    expect(res.disposition).toContain('filename="terms.docx"');
    expect(res.bytes.subarray(0, 2).toString()).toBe("PK");
    expect(res.warnings).toEqual([]);
    const back = await reimport(res.bytes);
    expect(back).toMatch(/<h1[^>]*>Service Terms<\/h1>/);
    expect(back).toMatch(/<strong>Supplier<\/strong>/);
    expect(back).toMatch(/<em>on time<\/em>/);
    expect(back).toMatch(/<a href="https:\/\/example.com\/terms">terms<\/a>/);
    expect(back).toMatch(/colspan="2"/);
    expect(structure(back).items).toBe(3);
  });

  it("treats doc as docx and refuses other formats with 422", async () => {
    const doc = await exportDoc({ html: SAMPLE, format: "doc" });
    expect(doc.status).toBe(200);
    expect(doc.type).toContain("wordprocessingml");
    const odt = await exportDoc({ html: SAMPLE, format: "odt" });
    expect(odt.status).toBe(422);
    expect(JSON.stringify(odt.json().detail)).toContain("format");
  });

  it("prints pdf with headless Chromium on the requested paper", async () => {
    const res = await exportDoc({
      html: SAMPLE,
      format: "pdf",
      options: { paper_size: "A4", orientation: "landscape", margins: "narrow", watermark_text: "DRAFT" },
    });
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/pdf");
    expect(res.bytes.subarray(0, 5).toString()).toBe("%PDF-");
    // A4 landscape is 842 x 595 points.
    expect(res.bytes.toString("latin1")).toMatch(/\/MediaBox\s*\[\s*0 0 841\.9\d* 595\.\d+\s*\]/);
  }, 60_000);

  it("exports html, GFM markdown and reading-order txt, listing losses in X-Export-Warnings", async () => {
    const html = await exportDoc({ html: SAMPLE, format: "html", options: { paper_size: "Legal" } });
    expect(html.type).toContain("text/html");
    expect(html.bytes.toString()).toContain("@page { size: 8.5in 14in;");
    expect(html.bytes.toString()).toContain("<footer>");

    const md = await exportDoc({ html: SAMPLE, format: "markdown" });
    const text = md.bytes.toString();
    expect(md.type).toContain("text/markdown");
    expect(md.disposition).toContain(".md");
    expect(text).toContain("# Service Terms");
    expect(text).toMatch(/\| Plan \| Price \|\n\| --- \| --- \|/);
    expect(text).toMatch(/3\. +Third/);
    expect(md.warnings).toEqual(
      expect.arrayContaining([expect.stringMatching(/merged/i), expect.stringMatching(/footers/i)]),
    );

    const txt = await exportDoc({
      html: "<h1>A</h1><p>B</p><ul><li>C</li></ul><table><tr><td>D</td><td>E</td></tr></table>",
      format: "txt",
    });
    expect(txt.bytes.toString()).toBe("A\nB\n- C\nD\tE\n");
  });

  it("refuses bad options with 422 and a missing source with 422", async () => {
    expect((await exportDoc({ html: SAMPLE, options: { paper_size: "B5" } })).status).toBe(422);
    expect((await exportDoc({ html: SAMPLE, options: { margins: "custom" } })).status).toBe(422);
    expect((await exportDoc({ format: "docx" })).status).toBe(422);
  });

  it("answers 413 as rule 6 (detail is an object) over the format cap", async () => {
    const res = await exportDoc({ html: `<p>${"long text ".repeat(200)}</p>`, format: "txt" });
    expect(res.status).toBe(413);
    expect(res.json().detail).toMatchObject({
      error_code: "document_too_large",
      suggested_action: "email_request",
      contact_email: "support@redline.local",
      format: "txt",
      max_size_mb: expect.any(Number),
      document_size_mb: expect.any(Number),
      support_event_id: expect.any(String),
      message_user: expect.any(String),
    });
  });

  it("exports a session's document; another owner's session is 404", async () => {
    const up = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: {
        filename: "budget.docx",
        file_base64: corpusFile("docx/poi-IllustrativeCases-budget-tables.docx").toString("base64"),
        session_id: "export-session-1",
      },
    });
    expect(up.status).toBe(200);
    const res = await exportDoc({ session_id: "export-session-1", format: "markdown" });
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toContain("| ---");
    expect((await exportDoc({ session_id: "export-session-1", document_id: "doc_nope" })).status).toBe(404);
    expect((await exportDoc({ session_id: "export-session-1" }, otherKey)).status).toBe(404);
  });

  it("exports a pre-signed export-html upload", async () => {
    const html = Buffer.from("<h2>From upload</h2><p>Hi</p>");
    const slot = (await (
      await stack.call("POST", "/v1/uploads", {
        key,
        body: { filename: "page.html", size_bytes: html.length, purpose: "export-html" },
      })
    ).json()) as { upload_id: string; upload_url: string };
    await fetch(slot.upload_url, { method: "PUT", body: new Uint8Array(html) });
    const res = await exportDoc({ upload_id: slot.upload_id, format: "txt" });
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toBe("From upload\nHi\n");
  });
});

describe("round trip docx → HTML → docx → HTML", () => {
  const files = [
    "docx/tika-testWORD_various.docx",
    "docx/pydocx-tbl-cell-access-merged.docx",
    "docx/poi-IllustrativeCases-budget-tables.docx",
    "docx/tika-testWORD_numbered_list.docx",
  ];
  for (const file of files) {
    it(`keeps tables, merges, lists, headings, formatting and footnotes of ${file}`, async () => {
      const first = await reimport(corpusFile(file));
      const exported = await exportDoc({ html: first, format: "docx" });
      expect(exported.status).toBe(200);
      const second = await reimport(exported.bytes);
      expect(structure(second)).toEqual(structure(first));
    });
  }

  it("keeps images (stored media) across the round trip", async () => {
    const first = await reimport(corpusFile("docx/poi-VariousPictures.docx"), "pictures.docx");
    const exported = await exportDoc({ html: first, format: "docx" });
    const second = await reimport(exported.bytes);
    const pictures = (html: string) => (html.match(/<img\b[^>]*src="\/v1\/media\/[0-9a-f]{64}"/g) ?? []).length;
    expect(pictures(second)).toBeGreaterThanOrEqual(2);
    // Word-only formats (EMF/WMF) are the losses reported.
    expect(pictures(second)).toBe(pictures(first) - (exported.warnings?.length ? exported.warnings.length : 0));
  });
});

/** A fetched file's body as bytes. */
async function bodyBytes(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

describe("downloads and email export", () => {
  it("POST /v1/downloads returns a link valid 15 minutes that serves the file", async () => {
    const res = await stack.call("POST", "/v1/downloads", {
      key,
      body: { html: SAMPLE, format: "pdf", filename: "terms.pdf" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      download_url: string;
      expires_in_seconds: number;
      filename: string;
      format: string;
    };
    expect(body).toMatchObject({ expires_in_seconds: 900, filename: "terms.pdf", format: "pdf" });
    const file = await fetch(body.download_url);
    expect(file.status).toBe(200);
    expect((await bodyBytes(file)).subarray(0, 5).toString()).toBe("%PDF-");
  }, 60_000);

  it("queues an email export, mails a 7-day link over SMTP, and the link serves the file", async () => {
    await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: {
        filename: "mail.md",
        file_base64: Buffer.from("# Mailed\n\nBody text.").toString("base64"),
        session_id: "mail-1",
      },
    });
    const res = await stack.call("POST", "/v1/documents/export/email-request", {
      key,
      body: {
        session_id: "mail-1",
        format: "docx",
        filename: "mailed",
        options: {},
        recipient_email: "eve@example.com",
      },
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const job = (await res.json()) as { job_id: string; recipient_email: string; status: string };
    expect(job).toMatchObject({ status: "queued", recipient_email: "eve@example.com" });
    expect(job.job_id).toMatch(/^exp_/);
    const deadline = Date.now() + 30_000;
    const mails = smtp.received;
    while (mails.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(mails).toHaveLength(1);
    expect(mails[0].to).toEqual(["eve@example.com"]);
    const unfolded = mails[0].raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
    expect(unfolded).toContain("X-Amz-Expires=604800");
    const link = /https?:\/\/[^\s"<>]+X-Amz-Signature=[0-9a-f]+/.exec(unfolded)?.[0] ?? "";
    const file = await fetch(link.replace(/&amp;/g, "&"));
    expect(file.status).toBe(200);
    expect((await bodyBytes(file)).subarray(0, 2).toString()).toBe("PK");
  });

  it("requires a valid recipient when the account has no email on file (400)", async () => {
    // The session and its document exist, so the 400 is about the recipient alone.
    await stack.call("POST", "/v1/documents/upload-base64", {
      key: otherKey,
      body: { filename: "x.md", file_base64: Buffer.from("# X").toString("base64"), session_id: "mail-x" },
    });
    const res = await stack.call("POST", "/v1/documents/export/email-request", {
      key: otherKey,
      body: { session_id: "mail-x", format: "pdf" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "no_email_on_file" });
    const bad = await stack.call("POST", "/v1/documents/export/email-request", {
      key,
      body: { session_id: "mail-1", format: "pdf", recipient_email: "not-an-address" },
    });
    expect(bad.status).toBe(400);
  });
});

describe("billing", () => {
  it("never bills exports, downloads, email exports or uploads", async () => {
    const resolved = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
    const principal = {
      userId: resolved?.userId ?? "",
      organizationId: resolved?.organizationId ?? "",
      ownerId: resolved?.ownerId ?? "",
      plan: resolved?.plan ?? "",
    };
    const before = (await stack.billing.getUsage({}, { principal })).usage;
    expect((await exportDoc({ html: SAMPLE, format: "docx" })).status).toBe(200);
    const after = (await stack.billing.getUsage({}, { principal })).usage;
    // Every earlier test of this file exported, uploaded or mailed with this key.
    expect(before?.monthlyUsed).toBe(0);
    expect(after?.monthlyUsed).toBe(0);
  });
});
