// Document uploads end to end (unshown-parts.md, "Uploads, attachments, templates"): multipart
// with open_mode, base64 with and without a session, pre-signed uploads through the object store,
// stored images, and refusals (415, 413, encrypted, truncated, a zip bomb, fuzzed files) that
// never become a 5xx. Real gateway, services, Postgres and S3; files from test/fixtures/corpus.

import { buildZip, minimalDocxParts } from "@redline/ingest";
import { createDb, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { corpusFile } from "./support/fixtures.js";
import { postMultipart } from "./support/multipart.js";
import { startTestStack, type TestStack } from "./support/stack.js";

interface RosterEntry {
  document_id: string;
  durable_document_id: string | null;
  title: string;
  focused: boolean;
  version_id?: string;
}
interface UploadBody {
  session_id?: string;
  document_id?: string;
  durable_document_id?: string;
  version_id?: string;
  chunks_count?: number;
  title: string;
  format: string;
  page_setup: { size: unknown; orientation: string; margins: unknown } | null;
  html?: string;
  roster?: RosterEntry[];
  warnings: string[];
  detail?: unknown;
}

const MAX_MB = 2;
let stack: TestStack;
let key: string;
let otherKey: string;
let ingestDb: Knex;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "uploads", maxRequestMb: MAX_MB });
  [key, otherKey] = await Promise.all([stack.createKey("uma"), stack.createKey("oscar")]);
  ingestDb = createDb(stack.databaseUrl, "ingest", 2);
});
afterAll(async () => {
  await ingestDb?.destroy();
  await stack?.close();
});

/** POST /v1/documents/upload as multipart/form-data. */
async function uploadMultipart(
  filename: string,
  bytes: Buffer,
  fields: Record<string, string> = {},
  k = key,
): Promise<{ status: number; body: UploadBody }> {
  const res = await postMultipart(stack, "/v1/documents/upload", k, { file: { bytes, filename }, ...fields });
  return { status: res.status, body: (await res.json()) as UploadBody };
}

async function uploadBase64(body: Record<string, unknown>, k = key): Promise<{ status: number; body: UploadBody }> {
  const res = await stack.call("POST", "/v1/documents/upload-base64", { key: k, body });
  return { status: res.status, body: (await res.json()) as UploadBody };
}

describe("POST /v1/documents/upload (multipart)", () => {
  it("loads a docx into a new session with its structure, roster and page setup", async () => {
    const { status, body } = await uploadMultipart(
      "tika-testWORD_various.docx",
      corpusFile("docx/tika-testWORD_various.docx"),
    );
    expect(status).toBe(200);
    expect(body.format).toBe("docx");
    expect(body.session_id).toMatch(/^[\w.-]+$/);
    expect(body.page_setup).toMatchObject({ orientation: expect.stringMatching(/portrait|landscape/) });
    expect(body.html).toContain("<table");
    expect(body.html).toContain("Row 2 Col 3");
    expect(body.html).toMatch(/<ul[^>]*>[\s\S]*Bullet 3/);
    expect(body.html).toContain("data-chunk-id=");
    expect(body.roster).toHaveLength(1);
    expect(body.roster?.[0]).toMatchObject({ focused: true, durable_document_id: body.durable_document_id });
    expect(body.chunks_count).toBeGreaterThan(10);
  });

  it("opens by open_mode: replace, new_focused, background and new_tab", async () => {
    const first = await uploadMultipart("a.md", Buffer.from("# Alpha\n\nFirst."));
    const sid = first.body.session_id as string;
    const firstDoc = first.body.durable_document_id;

    const replaced = await uploadMultipart("b.md", Buffer.from("# Beta\n\nReplaced."), { session_id: sid });
    expect(replaced.status).toBe(200);
    expect(replaced.body.durable_document_id).toBe(firstDoc);
    expect(replaced.body.version_id).not.toBe(first.body.version_id);
    expect(replaced.body.roster).toHaveLength(1);

    /** The roster has `length` entries and `focusedId` is the focused one. */
    const expectRoster = (body: UploadBody, length: number, focusedId: string | undefined) => {
      expect(body.roster).toHaveLength(length);
      expect(body.roster?.find((e) => e.focused)?.durable_document_id).toBe(focusedId);
    };
    const focusedNew = await uploadMultipart("c.txt", Buffer.from("Gamma text"), {
      session_id: sid,
      open_mode: "new_focused",
    });
    expectRoster(focusedNew.body, 2, focusedNew.body.durable_document_id);
    const background = await uploadMultipart("d.html", Buffer.from("<h1>Delta</h1><p>In the back.</p>"), {
      session_id: sid,
      open_mode: "background",
    });
    expectRoster(background.body, 3, focusedNew.body.durable_document_id);
    const tab = await uploadMultipart("e.md", Buffer.from("# Epsilon"), { session_id: sid, open_mode: "new_tab" });
    expectRoster(tab.body, 4, tab.body.durable_document_id);
  });

  it("loads another owner's session id into the caller's own session; an unknown open_mode is 422", async () => {
    const mine = await uploadMultipart("a.txt", Buffer.from("mine"));
    const theirs = await uploadMultipart(
      "b.txt",
      Buffer.from("theirs"),
      { session_id: mine.body.session_id as string },
      otherKey,
    );
    // Session ids are scoped per owner: the other owner gets a session of its own by that id.
    expect(theirs.status).toBe(200);
    expect(theirs.body.roster).toHaveLength(1);
    expect(theirs.body.durable_document_id).not.toBe(mine.body.durable_document_id);
    expect(JSON.stringify(theirs.body)).not.toContain("mine");
    const bad = await uploadMultipart("a.txt", Buffer.from("x"), { open_mode: "sideways" });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toContain("open_mode");
  });

  it("answers 422 when the file part is missing", async () => {
    const res = await postMultipart(stack, "/v1/documents/upload", key, { session_id: "abc" });
    expect(res.status).toBe(422);
  });

  it("refuses .doc and other extensions with 415 listing the supported ones", async () => {
    const { status, body } = await uploadMultipart("legacy.doc", corpusFile("doc/tika-testWORD_various.doc"));
    expect(status).toBe(415);
    for (const ext of [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"])
      expect(String(body.detail)).toContain(ext);
  });

  it("answers 413 JSON (rule 5) for a body over the cap, declared or streamed", async () => {
    const big = Buffer.alloc(MAX_MB * 1024 * 1024 + 1024, 0x61);
    const declared = await uploadMultipart("big.txt", big);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ error_code: "request_too_large", max_size_mb: MAX_MB });

    // Chunked transfer: no Content-Length, so the multipart parser itself must stop at the cap.
    const boundary = "----redline-test";
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const payload = Buffer.concat([head, big, tail]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < payload.length; i += 256 * 1024) controller.enqueue(payload.subarray(i, i + 256 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${stack.url}/v1/documents/upload`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": `multipart/form-data; boundary=${boundary}` },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error_code: "request_too_large" });
  });
});

describe("hostile files through the gateway", () => {
  it("refuses encrypted, truncated and malformed files with an actionable 400", async () => {
    const cases: [string, string, RegExp][] = [
      ["docx/tika-testWORD_protected_passtika.docx", "p.docx", /password/i],
      ["docx/poi-truncated62886.docx", "t.docx", /docx/i],
      ["pdf/pdf2json-i43_err_encrypted.pdf", "e.pdf", /password/i],
    ];
    for (const [file, name, message] of cases) {
      const { status, body } = await uploadBase64({ filename: name, file_base64: corpusFile(file).toString("base64") });
      expect(status, file).toBe(400);
      expect(String(body.detail), file).toMatch(message);
    }
  });

  it("refuses a zip bomb with a 400 in milliseconds, not a 5xx", async () => {
    const bomb = buildZip([
      ...minimalDocxParts(),
      { name: "word/media/zeros.bin", data: Buffer.alloc(64 * 1024 * 1024) },
    ]);
    expect(bomb.length).toBeLessThan(MAX_MB * 1024 * 1024);
    const { status, body } = await uploadMultipart("bomb.docx", bomb);
    expect(status).toBe(400);
    expect(String(body.detail)).toMatch(/zip|compress|expand/i);
  });

  it("never answers 5xx for fuzzed corpus files", async () => {
    const seeds: [string, string][] = [
      ["docx/tika-testWORD_various.docx", "f.docx"],
      ["pdf/tika-testPDFVarious.pdf", "f.pdf"],
      ["rtf/tika-testRTFVarious.rtf", "f.rtf"],
      ["html/readability-v8-blog.html", "f.html"],
    ];
    let state = 0x5eed;
    const random = () => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state / 0x7fffffff;
    };
    const statuses: number[] = [];
    for (const [file, name] of seeds) {
      const original = corpusFile(file);
      for (let i = 0; i < 3; i++) {
        const bytes = Buffer.from(original);
        for (let f = 0; f < 1 + Math.floor(random() * 30); f++)
          bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        const cut = random() < 0.4 ? bytes.subarray(0, Math.floor(bytes.length * random())) : bytes;
        const { status } = await uploadBase64({ filename: name, file_base64: cut.toString("base64") });
        statuses.push(status);
      }
    }
    expect(statuses.every((s) => s === 200 || (s >= 400 && s < 500))).toBe(true);
  });
});

describe("POST /v1/documents/upload-base64", () => {
  it("converts only without a session_id", async () => {
    const { status, body } = await uploadBase64({
      filename: "tika-testRTFTableCellSeparation.rtf",
      file_base64: corpusFile("rtf/tika-testRTFTableCellSeparation.rtf").toString("base64"),
    });
    expect(status).toBe(200);
    expect(body.session_id).toBeUndefined();
    expect(body.format).toBe("rtf");
    expect(body.html).toMatch(/<table[\s\S]*a[\s\S]*b[\s\S]*c[\s\S]*d/);
  });

  it("loads into a session, with html only when return_html is true", async () => {
    const file = corpusFile("txt/tika-testTXT_win-1252.txt").toString("base64");
    const plain = await uploadBase64({ filename: "w.txt", file_base64: file, session_id: "upl-b64-1" });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ session_id: "upl-b64-1", page_setup: null });
    expect(plain.body.chunks_count).toBeGreaterThan(0);
    expect(plain.body.html).toBeUndefined();
    const withHtml = await uploadBase64({
      filename: "w.txt",
      file_base64: file,
      session_id: "upl-b64-1",
      return_html: true,
    });
    // Windows-1252 smart quotes decode to their Unicode characters.
    expect(withHtml.body.html).toMatch(/[\u201c\u201d]/);
  });

  it("validates filename and base64 (422)", async () => {
    const res = await uploadBase64({ filename: "x".repeat(513), file_base64: "%%%" });
    expect(res.status).toBe(422);
  });
});

describe("images", () => {
  it("stores embedded images once and serves them to their owner only", async () => {
    const { status, body } = await uploadBase64({
      filename: "pictures.docx",
      file_base64: corpusFile("docx/poi-VariousPictures.docx").toString("base64"),
      session_id: "upl-images",
      return_html: true,
    });
    expect(status).toBe(200);
    const ids = [...(body.html ?? "").matchAll(/src="\/v1\/media\/([0-9a-f]{64})"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(body.html).not.toContain("data:image");
    const mine = await fetch(`${stack.url}/v1/media/${ids[0]}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(mine.status).toBe(200);
    expect(mine.headers.get("content-type")).toMatch(/^image\//);
    expect((await mine.arrayBuffer()).byteLength).toBeGreaterThan(100);
    const theirs = await fetch(`${stack.url}/v1/media/${ids[0]}`, { headers: { Authorization: `Bearer ${otherKey}` } });
    expect(theirs.status).toBe(404);
  });
});

describe("pre-signed uploads", () => {
  it("uploads through the object store and processes into a session", async () => {
    const bytes = corpusFile("docx/pydocx-tbl-cell-access-merged.docx");
    const created = await stack.call("POST", "/v1/uploads", {
      key,
      body: {
        filename: "merged.docx",
        content_type: "application/octet-stream",
        size_bytes: bytes.length,
        purpose: "document",
      },
    });
    expect(created.status).toBe(200);
    const slot = (await created.json()) as {
      upload_id: string;
      upload_url: string;
      expires_in_seconds: number;
      max_size_bytes: number;
    };
    expect(slot).toMatchObject({ expires_in_seconds: 300, max_size_bytes: MAX_MB * 1024 * 1024 });
    const put = await fetch(slot.upload_url, { method: "PUT", body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);

    const processed = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, {
      key,
      body: { session_id: "presigned-1", parse_mode: "auto", return_html: true },
    });
    expect(processed.status).toBe(200);
    const body = (await processed.json()) as UploadBody;
    expect(body.session_id).toBe("presigned-1");
    expect(body.html).toMatch(/colspan="2"/);
    expect(body.html).toMatch(/rowspan="2"/);

    const stranger = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, { key: otherKey, body: {} });
    expect(stranger.status).toBe(404);
  });

  it("answers 404 for an expired or never-filled upload and 415/413 up front", async () => {
    const make = async (body: Record<string, unknown>) => stack.call("POST", "/v1/uploads", { key, body });
    const empty = (await (await make({ filename: "n.md", size_bytes: 10 })).json()) as { upload_id: string };
    expect((await stack.call("POST", `/v1/uploads/${empty.upload_id}/process`, { key, body: {} })).status).toBe(404);

    const slot = (await (await make({ filename: "x.md", size_bytes: 3 })).json()) as {
      upload_id: string;
      upload_url: string;
    };
    await fetch(slot.upload_url, { method: "PUT", body: "# x" });
    await ingestDb("uploads")
      .where({ id: slot.upload_id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, { key, body: {} })).status).toBe(404);

    expect((await make({ filename: "old.doc", size_bytes: 10 })).status).toBe(415);
    expect((await make({ filename: "big.pdf", size_bytes: MAX_MB * 1024 * 1024 + 1 })).status).toBe(413);
    expect((await make({ filename: "huge.pdf", size_bytes: 104_857_601 })).status).toBe(422);
  });
});

describe("OpenAPI", () => {
  it("documents the multipart uploads as multipart/form-data and the file routes", async () => {
    const doc = (await (await fetch(`${stack.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    expect(Object.keys(doc.paths["/v1/documents/upload"].post.requestBody?.content ?? {})).toEqual([
      "multipart/form-data",
    ]);
    for (const path of ["/v1/documents/export", "/v1/uploads", "/v1/attachments/status/{session_id}", "/v1/templates"])
      expect(doc.paths[path], path).toBeDefined();
  });
});
