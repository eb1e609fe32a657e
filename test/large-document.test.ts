// A 100,000-chunk document (about 1 MB of `<p>` paragraphs) end to end: loaded by chat with
// document_html and by upload, read back whole, saved with every chunk changed, with a block
// of new chunks, and stale over thousands of chunks (409 naming them). Every statement that
// binds per-chunk values must stay under Postgres's 65,535 bind parameters: before, a
// 65,536-chunk write answered 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Body, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
const N = 100_000;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "large_document" }, "lara"));
});
afterAll(() => stack?.close());

/** Runs `step`, logging its wall time (the report of timings reads these lines). */
async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const out = await step();
  console.log(`[large-document] ${label}: ${Date.now() - started} ms`);
  return out;
}

const texts = (html: string) => [...html.matchAll(/>([^<]*)<\/p>/g)].map((m) => m[1]);

describe(`a ${N.toLocaleString("en")}-chunk document`, () => {
  it("loads through chat, reads back whole, and saves many chunks at once", async () => {
    const chat = await timed("chat with document_html", () =>
      jsonCall(stack, "POST", "/v1/chat", key, {
        message: 'replace "x1" with "y"',
        document_html: "<p>x</p>".repeat(N),
        response_mode: "compact",
      }),
    );
    expect(chat.status, JSON.stringify(chat.body).slice(0, 300)).toBe(200);
    const sid = chat.body.session_id as string;
    const documentId = chat.body.document_changes.document_id as string;

    const detail = await timed("read back (detail with html)", () =>
      jsonCall(stack, "GET", `/v1/documents/${documentId}?include_html=true`, key),
    );
    expect(detail.status).toBe(200);
    expect(detail.body.structure.block_count).toBe(N);
    const html = detail.body.html as string;
    expect(texts(html)).toHaveLength(N);

    // Every chunk changed in one save: N closed and N new revisions in one version.
    const all = await timed("save changing every chunk", () =>
      jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/primary/save`, key, {
        html: html.replaceAll(">x</p>", ">z</p>"),
        base_version_id: detail.body.version_id,
      }),
    );
    expect(all.status, JSON.stringify(all.body).slice(0, 300)).toBe(200);
    expect(all.body.changed_chunk_ids).toHaveLength(N);

    // A block of new paragraphs pasted after the first one (one run of inserts).
    const lines = (all.body.html as string).split("\n");
    const pasted = [lines[0], ...Array.from({ length: 20_000 }, (_, i) => `<p>new ${i}</p>`), ...lines.slice(1)];
    const inserted = await timed("save inserting 20,000 chunks", () =>
      jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/primary/save`, key, {
        html: pasted.join("\n"),
        base_version_id: all.body.version_id,
      }),
    );
    expect(inserted.status, JSON.stringify(inserted.body).slice(0, 300)).toBe(200);
    expect(inserted.body.changed_chunk_ids).toHaveLength(20_000);

    // A save from the first version over 10,000 chunks another save changed since: 409, all
    // conflicts recorded (more than one insert batch), nothing written.
    const stale = html
      .split("\n")
      .map((line, i) => (i < 10_000 ? line.replace(">x</p>", ">w</p>") : line))
      .join("\n");
    const conflict = await timed("stale save over 10,000 chunks (409)", () =>
      jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/primary/save`, key, {
        html: stale,
        base_version_id: detail.body.version_id,
      }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe("chunk_conflict");
    // The body lists the first 200 (it travels in a gRPC trailer) and counts them all.
    expect(conflict.body).toMatchObject({ conflict_count: 10_000, truncated: true });
    expect(conflict.body.conflicts).toHaveLength(200);
    const [recorded] = await stack
      .documentsDb("documents.conflicts")
      .where({ document_id: documentId })
      .count<{ count: string }[]>("* as count");
    expect(Number(recorded.count)).toBe(10_000);

    const roster = await timed("read back (roster with html)", () =>
      jsonCall(stack, "GET", `/v1/sessions/${sid}/documents?include_html=true`, key),
    );
    const head = roster.body.documents[0] as Body;
    expect(head.version_id ?? head.durable_document_id).toBeTruthy();
    const back = texts(head.html as string);
    expect(back).toHaveLength(N + 20_000);
    expect(back.slice(0, 3)).toEqual(["z", "new 0", "new 1"]);
    expect(back.filter((t) => t === "z")).toHaveLength(N);
  }, 600_000);

  it("loads through upload", async () => {
    const up = await timed("upload-base64 of the .html", () =>
      jsonCall(stack, "POST", "/v1/documents/upload-base64", key, {
        filename: "big.html",
        file_base64: Buffer.from(`<html><body>${"<p>u</p>".repeat(N)}</body></html>`).toString("base64"),
        session_id: "large-upload",
      }),
    );
    expect(up.status, JSON.stringify(up.body).slice(0, 300)).toBe(200);
    expect(up.body.chunks_count).toBe(N);
    const roster = await jsonCall(stack, "GET", "/v1/sessions/large-upload/documents?include_html=true", key);
    expect(texts(roster.body.documents[0].html)).toHaveLength(N);
  }, 600_000);
});
