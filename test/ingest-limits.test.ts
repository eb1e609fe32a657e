// Ingest under big and hostile documents, end to end: a multi-MB export finishes in bounded time
// without stalling another tenant's tiny export (the HTML work runs in the worker pool, in time
// linear in the size); a document over the element cap is a 413 naming the count and the limit
// (Errors rule 6 for exports, rule 5 for uploads); work past its time bound is a clear 4xx; and
// every export source and convert-only upload is sanitized (no scripts, javascript: links,
// frames, handlers or forms reach a file or the client).

import { checkZip } from "@redline/ingest";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

const MAX_ELEMENTS = 100_000;
let stack: TestStack;
let key: string;
let otherKey: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), {
    name: "ingest_limits",
    // Two workers, as on a 2-core host: one big job must leave the other free.
    ingest: { converterWorkers: 2, limits: { maxElements: MAX_ELEMENTS } },
  });
  [key, otherKey] = await Promise.all([stack.createKey("limits-a"), stack.createKey("limits-b")]);
});
afterAll(async () => {
  await stack?.close();
});

/** About `mb` MB of ordinary paragraphs (three elements per ~300 bytes: ~10,500 a MB). */
function bigHtml(mb: number): string {
  const p = `<p>Clause: the <b>Supplier</b> shall deliver the goods <i>on time</i> and in full, as agreed. ${"The parties agree that this clause survives termination of the agreement. ".repeat(3)}</p>\n`;
  return p.repeat(Math.ceil((mb * 1024 * 1024) / p.length));
}

async function exportDoc(body: Record<string, unknown>, k = key) {
  const started = Date.now();
  const res = await stack.call("POST", "/v1/documents/export", { key: k, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, ms: Date.now() - started, finishedAt: Date.now() };
}

describe("big exports", () => {
  it("exports 4 MB as txt in bounded time while another tenant's tiny export is not held up", async () => {
    const html = bigHtml(4);
    // Warm both workers (module loading is not what this measures).
    await Promise.all([exportDoc({ html: "<p>a</p>", format: "txt" }), exportDoc({ html: "<p>b</p>", format: "txt" })]);
    const big = exportDoc({ html, format: "txt" });
    // Let the big request reach ingest before the small one is sent.
    await new Promise((r) => setTimeout(r, 700));
    const small = await exportDoc({ html: "<p>Hi there</p>", format: "txt" }, otherKey);
    expect(small.status).toBe(200);
    expect(small.bytes.toString("utf8")).toBe("Hi there\n");
    expect(small.ms).toBeLessThan(2_000);
    const done = await big;
    expect(done.status).toBe(200);
    expect(done.bytes.toString("utf8")).toMatch(/^Clause: the Supplier shall deliver/);
    expect(done.ms).toBeLessThan(30_000);
  });

  it("refuses an export source over the element cap with rule 6's 413 naming the count and the limit", async () => {
    const res = await exportDoc({ html: "<p>x</p>".repeat(MAX_ELEMENTS + 5), format: "txt" });
    expect(res.status).toBe(413);
    const { detail } = JSON.parse(res.bytes.toString("utf8")) as { detail: Record<string, unknown> };
    expect(detail).toMatchObject({
      error_code: "document_too_large",
      suggested_action: "email_request",
      format: "txt",
      element_count: MAX_ELEMENTS + 5,
      max_elements: MAX_ELEMENTS,
    });
    expect(typeof detail.document_size_mb).toBe("number");
    expect(typeof detail.max_size_mb).toBe("number");
    expect(String(detail.message_user)).toMatch(/100,005 elements; the limit is 100,000/);
  });

  it("refuses an upload over the element cap with rule 5's 413 whose detail names the count and the limit", async () => {
    const html = `<html><body>${"<p>x</p>".repeat(MAX_ELEMENTS + 5)}</body></html>`;
    const res = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: { filename: "huge.html", file_base64: Buffer.from(html).toString("base64") },
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.detail).toMatch(/100,005 elements; the limit is 100,000/);
    expect(body).toMatchObject({ error_code: "request_too_large", element_count: MAX_ELEMENTS + 5 });
  });
});

describe("time bounds", () => {
  let slow: TestStack;
  let slowKey: string;
  beforeAll(async () => {
    // Bounds far below what a 1 MB document needs: every conversion and export outlasts them.
    slow = await startTestStack(inject("infra"), {
      name: "ingest_slow",
      ingest: { converterWorkers: 1, limits: { timeoutMs: 20, exportTimeoutMs: 20 } },
    });
    slowKey = await slow.createKey("limits-slow");
  });
  afterAll(async () => {
    await slow?.close();
  });

  it("answers an export past its time bound with rule 6's 413, and an upload with a 400", async () => {
    const exported = await slow.call("POST", "/v1/documents/export", {
      key: slowKey,
      body: { html: bigHtml(1), format: "docx" },
    });
    expect(exported.status).toBe(413);
    const { detail } = (await exported.json()) as { detail: Record<string, unknown> };
    expect(detail).toMatchObject({ error_code: "document_too_large", suggested_action: "email_request" });
    expect(String(detail.message_user)).toMatch(/building it took longer than/);

    const uploaded = await slow.call("POST", "/v1/documents/upload-base64", {
      key: slowKey,
      body: { filename: "big.html", file_base64: Buffer.from(bigHtml(1)).toString("base64") },
    });
    expect(uploaded.status).toBe(400);
    expect(((await uploaded.json()) as { detail: string }).detail).toMatch(/took longer than .* s to convert/);

    // The pool replaced its worker: a small export still works.
    const small = await slow.call("POST", "/v1/documents/export", {
      key: slowKey,
      body: { html: "<p>ok</p>", format: "txt" },
    });
    expect(small.status).toBeLessThan(500);
  });
});

const HOSTILE = `<h1 onclick="steal()">Terms</h1>
<p>Read <a href="javascript:alert('pwned')">this</a> and <a href="https://example.com/ok">that</a>.</p>
<script>alert('script-ran')</script>
<iframe src="https://evil.example/frame"></iframe>
<form action="https://evil.example/post"><input name="password" value="hunter2"></form>
<img src="x" onerror="alert('img-ran')">`;

/** Markers of active content that must never survive sanitizing. */
const ACTIVE = [
  /javascript:/i,
  /<script/i,
  /script-ran/,
  /<iframe/i,
  /evil\.example/,
  /onclick|onerror/i,
  /<form|<input/i,
  /hunter2/,
];

function expectInert(text: string) {
  for (const marker of ACTIVE) expect(text).not.toMatch(marker);
}

describe("sanitizing", () => {
  for (const format of ["html", "markdown", "txt", "docx", "pdf"] as const) {
    it(`exports raw html as ${format} without scripts, javascript: links, frames, handlers or forms`, async () => {
      const res = await exportDoc({ html: HOSTILE, format });
      expect(res.status).toBe(200);
      if (format === "docx") {
        const zip = checkZip(
          res.bytes,
          { maxEntries: 100, maxUncompressedBytes: 50 * 1024 * 1024, maxCompressionRatio: 1000 },
          ".docx",
        );
        const xml = zip.entries.map((e) => zip.read(e.name)?.toString("utf8") ?? "").join("\n");
        expect(xml).toMatch(/Terms/);
        expect(xml).toMatch(/example\.com\/ok/);
        expectInert(xml);
      } else if (format === "pdf") {
        const raw = res.bytes.toString("latin1");
        expect(raw).toMatch(/example\.com\/ok/);
        expectInert(raw);
      } else {
        const text = res.bytes.toString("utf8");
        expect(text).toMatch(/Terms/);
        expectInert(text);
      }
    });
  }

  it("sanitizes pre-signed export-html sources and downloads", async () => {
    const created = await stack.call("POST", "/v1/uploads", {
      key,
      body: { filename: "page.html", content_type: "text/html", size_bytes: HOSTILE.length, purpose: "export-html" },
    });
    expect(created.status).toBe(200);
    const slot = (await created.json()) as { upload_id: string; upload_url: string };
    expect((await fetch(slot.upload_url, { method: "PUT", body: HOSTILE })).status).toBe(200);

    const exported = await exportDoc({ upload_id: slot.upload_id, format: "html" });
    expect(exported.status).toBe(200);
    expectInert(exported.bytes.toString("utf8"));

    const processed = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, { key, body: {} });
    expect(processed.status).toBe(200);
    const html = ((await processed.json()) as { html: string }).html;
    expect(html).toMatch(/Terms/);
    expectInert(html);

    const download = await stack.call("POST", "/v1/downloads", {
      key,
      body: { html: HOSTILE, format: "html", filename: "terms.html" },
    });
    expect(download.status).toBe(200);
    const link = (await download.json()) as { download_url: string };
    const file = await fetch(link.download_url);
    expect(file.status).toBe(200);
    expectInert(await file.text());
  });

  it("returns sanitized HTML from convert-only uploads (base64 and pre-signed, no session)", async () => {
    const page = `<html><head><script>alert('head')</script></head><body>${HOSTILE}<button onclick="x()">Go</button></body></html>`;
    const res = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: { filename: "page.html", file_base64: Buffer.from(page).toString("base64") },
    });
    expect(res.status).toBe(200);
    const html = ((await res.json()) as { html: string }).html;
    expect(html).toMatch(/Terms/);
    expectInert(html);

    const md =
      '# Tasks\n\n- [ ] open <a href="javascript:alert(1)" onclick="x()">it</a>\n\n<form><input value="hunter2"></form>\n';
    const created = await stack.call("POST", "/v1/uploads", {
      key,
      body: { filename: "notes.md", content_type: "text/markdown", size_bytes: md.length, purpose: "document" },
    });
    const slot = (await created.json()) as { upload_id: string; upload_url: string };
    expect((await fetch(slot.upload_url, { method: "PUT", body: md })).status).toBe(200);
    const processed = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, { key, body: {} });
    expect(processed.status).toBe(200);
    const converted = ((await processed.json()) as { html: string }).html;
    expect(converted).toMatch(/Tasks/);
    expectInert(converted);
  });
});
