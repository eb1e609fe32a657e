// CreateDocument with an idempotency key creates once: the agent's job worker stores a loaded
// document and can be killed right after, and its rerun must get the same document back instead
// of a second copy. Without a key every call creates a document, stored exactly as before.
import { type commonV1, documentsV1 } from "@redline/grpc-stubs";
import { chunkHtml } from "@redline/html-chunks";
import { createRpcClient, type Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jsonCall } from "./support/documents-client.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let documents: ReturnType<typeof createRpcClient<typeof documentsV1.DocumentsServiceService>>;

/** A fresh owner: an API key and the principal the gateway would resolve it to. */
async function owner(user: string): Promise<{ key: string; principal: Principal }> {
  const key = await stack.createKey(user);
  const principal = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
  if (!principal) throw new Error("no principal");
  return { key, principal };
}

function create(
  principal: Principal,
  html: string,
  idempotencyKey = "",
  title = "",
  pageSetup: commonV1.PageSetup | undefined = undefined,
) {
  return documents.createDocument({ html, title, pageSetup, sessionId: "s1", idempotencyKey }, { principal });
}

/** The outbox rows of an owner, in id order. */
function outboxOf(ownerId: string): Promise<{ event_type: string; document_id: string; payload: unknown }[]> {
  return stack.documentsDb("documents.outbox").where({ owner_id: ownerId }).orderBy("id");
}

/** The ids the Files view lists for the key's owner. */
async function filesView(key: string): Promise<string[]> {
  const list = await jsonCall(stack, "GET", "/v1/documents", key);
  expect(list.status).toBe(200);
  expect(list.body.total).toBe(list.body.documents.length);
  return list.body.documents.map((d: { document_id: string }) => d.document_id);
}

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "create_idempotency" });
  documents = createRpcClient(documentsV1.DocumentsServiceService, stack.addrs.documents);
});
afterAll(async () => {
  documents?.close();
  await stack?.close();
});

describe("CreateDocument idempotency", () => {
  it("creates one document for two calls with the same key, and replays it at its current head", async () => {
    const { key, principal } = await owner("cora");
    const first = await create(principal, "<h1>Lease</h1><p>Rent is due monthly.</p>", "job_1:load");
    // The rerun may carry different input (a reconverted upload): the first document still wins.
    const again = await create(principal, "<h1>Other</h1><p>Something else.</p>", "job_1:load");
    const documentId = first.document?.documentId ?? "";
    expect(documentId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });

    expect(await stack.documentsDb("documents.versions").where({ document_id: documentId })).toHaveLength(1);
    const events = await outboxOf(principal.ownerId);
    expect(events.map((e) => [e.event_type, e.document_id])).toEqual([["document_created", documentId]]);
    expect(await filesView(key)).toEqual([documentId]);

    // After an edit, a replay answers the document as it is now, still without writing.
    const edited = await documents.commitOperations(
      {
        documentId,
        baseVersionId: first.document?.versionId ?? "",
        sessionId: "s1",
        summary: "edit",
        returnChunks: false,
        operations: [
          {
            kind: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
            chunkId: first.chunks[1].chunkId,
            html: "<p>Rent is due weekly.</p>",
            afterChunkId: "",
            explanation: "test",
          },
        ],
        idempotencyKey: "",
      },
      { principal },
    );
    const later = await create(principal, "<p>Third try.</p>", "job_1:load");
    expect(later.document?.documentId).toBe(documentId);
    expect(later.document?.versionId).toBe(edited.document?.versionId);
    expect(later.chunks.map((c) => c.html).join("")).toContain("Rent is due weekly.");
    expect(await stack.documentsDb("documents.versions").where({ document_id: documentId })).toHaveLength(2);
    expect((await outboxOf(principal.ownerId)).map((e) => e.event_type)).toEqual([
      "document_created",
      "document_updated",
    ]);

    // Another key is another document.
    const other = await create(principal, "<p>Next job.</p>", "job_2:load");
    expect(other.document?.documentId).not.toBe(documentId);
    expect((await filesView(key)).sort()).toEqual([documentId, other.document?.documentId].sort());
  });

  it("gives a rerun that races the first call the first call's document", async () => {
    const { key, principal } = await owner("hana");
    // Hold the outbox lock so the first call stops mid-statement, its document row not yet
    // committed; the second then waits on that row and must answer the committed document.
    const hold = await stack.documentsDb.transaction();
    const waiting = async (event: string, count: number) => {
      for (let i = 0; i < 200; i++) {
        const { rows } = await stack.documentsDb.raw<{ rows: { n: string }[] }>(
          "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event = ?",
          [event],
        );
        if (Number(rows[0].n) >= count) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no backend waiting on ${event}`);
    };
    let first: Promise<documentsV1.CreateDocumentResponse> | undefined;
    let second: Promise<documentsV1.CreateDocumentResponse> | undefined;
    try {
      await hold.raw("select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))");
      first = create(principal, "<p>First run.</p>", "job_5:load");
      await waiting("advisory", 1);
      second = create(principal, "<p>Second run.</p>", "job_5:load");
      await waiting("transactionid", 1);
    } finally {
      await hold.commit();
    }
    const [a, b] = await Promise.all([first, second]);
    expect(b).toEqual({ ...a, replayed: true });
    expect(a?.replayed).toBe(false);
    expect(b?.chunks.map((c) => c.html).join("")).toContain("First run.");
    expect(await filesView(key)).toEqual([a?.document?.documentId]);
    expect(await outboxOf(principal.ownerId)).toHaveLength(1);
  });

  it("gives different owners using the same key different documents", async () => {
    const a = await owner("dana");
    const b = await owner("eli");
    const mine = await create(a.principal, "<p>Dana's private notes.</p>", "job_shared:load");
    const theirs = await create(b.principal, "<p>Eli's notes.</p>", "job_shared:load");
    const mineId = mine.document?.documentId ?? "";
    const theirsId = theirs.document?.documentId ?? "";
    expect(theirsId).not.toBe(mineId);
    expect(theirs.chunks.map((c) => c.html).join("")).not.toContain("Dana");
    expect(await filesView(a.key)).toEqual([mineId]);
    expect(await filesView(b.key)).toEqual([theirsId]);
    expect((await jsonCall(stack, "GET", `/v1/documents/${mineId}`, b.key)).status).toBe(404);
    expect((await outboxOf(b.principal.ownerId)).map((e) => e.document_id)).toEqual([theirsId]);
  });

  it("creates a new document on every call without a key", async () => {
    const { key, principal } = await owner("finn");
    const one = await create(principal, "<p>Same content.</p>");
    const two = await create(principal, "<p>Same content.</p>");
    expect(two.document?.documentId).not.toBe(one.document?.documentId);
    expect((await outboxOf(principal.ownerId)).map((e) => e.event_type)).toEqual([
      "document_created",
      "document_created",
    ]);
    expect(await filesView(key)).toHaveLength(2);
  });

  it("stores the created document as before: chunks, title, page setup, version, event", async () => {
    const { principal } = await owner("gail");
    // Chunk ids given in the HTML are kept, so the expected chunks are known before the call.
    const html =
      '<h1 data-chunk-id="c_title00001">Master Agreement</h1>' +
      '<p data-chunk-id="c_intro00002">Intro <b>bold</b> &amp; "quoted" \\ text.</p>' +
      '<h2 data-chunk-id="c_term000003">Term</h2><ul data-chunk-id="c_list000004"><li>One year</li></ul>' +
      '<table data-chunk-id="c_table00005"><tr><td>a</td></tr></table><p data-chunk-id="c_uni0000006">Ünïcödé — 日本語</p>';
    const pageSetup = {
      sizeName: "A4",
      orientation: "portrait",
      marginsInches: { top: 2, right: 1, bottom: 2, left: 1 },
    };
    const expected = chunkHtml(html).chunks;
    for (const idempotencyKey of ["", "job_3:load"]) {
      const created = await create(principal, html, idempotencyKey, "", pageSetup);
      const meta = created.document;
      if (!meta) throw new Error("no document");
      expect(created.chunks).toEqual(expected);
      expect(meta.title).toBe("Master Agreement");
      expect(meta.pageSetup).toEqual(pageSetup);
      expect(meta.chunkCount).toBe(expected.length);
      expect(meta.sectionCount).toBe(2);
      expect(meta.archived).toBe(false);
      expect(meta.createdAt).toBeInstanceOf(Date);
      expect(meta.updatedAt).toEqual(meta.createdAt);

      const read = await documents.getDocument(
        { documentId: meta.documentId, versionId: "", includeChunks: true },
        { principal },
      );
      // A read also lists the chunks as loaded from an original file: none for HTML.
      const { sourceChunks, ...document } = read;
      expect(sourceChunks).toEqual([]);
      const { replayed, ...stored } = created;
      expect(replayed).toBe(false);
      expect(document).toEqual(stored);

      const version = await stack.documentsDb("documents.versions").where({ document_id: meta.documentId }).first();
      expect(version).toMatchObject({
        id: meta.versionId,
        seq: 1,
        parent_id: null,
        session_id: "s1",
        kind: "create",
        summary: "created",
        idempotency_key: null,
      });
      const revisions = await stack
        .documentsDb("documents.chunk_revisions")
        .where({ document_id: meta.documentId })
        .orderBy("position");
      expect(revisions.map(({ position: _, ...r }) => r)).toEqual(
        expected.map((c) => ({
          document_id: meta.documentId,
          chunk_id: c.chunkId,
          html: c.html,
          valid_from: 1,
          valid_to: null,
        })),
      );
      // Positions compare bytewise (C collation) and must be strictly increasing in document order.
      const positions = revisions.map((r: { position: string }) => r.position);
      expect(
        positions.every(
          (p: string, i: number) => i === 0 || Buffer.compare(Buffer.from(positions[i - 1]), Buffer.from(p)) < 0,
        ),
      ).toBe(true);
      const event = await stack.documentsDb("documents.outbox").where({ document_id: meta.documentId }).first();
      expect(event).toMatchObject({
        event_type: "document_created",
        owner_id: principal.ownerId,
        version_id: meta.versionId,
        session_id: "s1",
        payload: { title: "Master Agreement", chunk_count: expected.length },
      });
    }
  });

  it("stores a document of more chunks than one insert batch, with an explicit title", async () => {
    const { principal } = await owner("hugo");
    const html = Array.from({ length: 1201 }, (_, i) => `<p>Clause ${i}.</p>`).join("");
    const created = await create(principal, html, "job_4:load", "  Big one  ");
    expect(created.document?.title).toBe("Big one");
    expect(created.document?.chunkCount).toBe(1201);
    const read = await documents.getDocument(
      { documentId: created.document?.documentId ?? "", versionId: "", includeChunks: true },
      { principal },
    );
    expect(read.chunks).toEqual(created.chunks);
    expect(read.chunks[1200].html).toContain("Clause 1200.");
  });
});
