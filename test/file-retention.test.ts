// The expired-file sweep (docs/security.md, "Retention"; services/ingest/src/commands/retention.ts):
// what no link or row reaches any more leaves the object store, and nothing still reachable does.
// Real gateway, services, Postgres and S3. The stack's own sweep is slowed to an hour, so each
// test runs a pass itself and sees exactly what it removed; the last test starts an ingest with a
// 100 ms sweep to see the timer do the same. Mail goes to a port nothing listens on, so an email
// export fails after its file was stored. Originals are swept with a documents client, as the
// service does: documents says which ones its documents still name.
import { randomUUID } from "node:crypto";
import { documentsLibraryV1, ingestV1 } from "@redline/grpc-stubs";
import { removeExpiredFiles, startIngestService } from "@redline/ingest";
import { freePort } from "@redline/local-infra";
import {
  createDb,
  createObjectStore,
  createRpcClient,
  InputError,
  type Knex,
  type ObjectStore,
  type Principal,
  RemoteError,
  UnavailableError,
} from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { TestInfra } from "./global-setup.js";
import { startTestStack, type TestStack } from "./support/stack.js";
import { until } from "./support/until.js";

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;
let infra: TestInfra;
let stack: TestStack;
let key: string;
let ingestDb: Knex;
let documentsDb: Knex;
let store: ObjectStore;
let library: ReturnType<typeof createRpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>>;

beforeAll(async () => {
  infra = inject("infra");
  stack = await startTestStack(infra, {
    name: "file_retention",
    ingest: { fileSweepMs: 3_600_000, mail: { smtpUrl: `smtp://127.0.0.1:${await freePort()}` } },
  });
  key = await stack.createKey("rhea");
  ingestDb = createDb(stack.databaseUrl, "ingest", 2);
  documentsDb = createDb(stack.databaseUrl, "documents", 2);
  store = createObjectStore(infra.s3);
  library = createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, stack.addrs.documents);
});
afterAll(async () => {
  library?.close();
  await ingestDb?.destroy();
  await documentsDb?.destroy();
  await stack?.close();
});

/** Whether `objectKey` is in the bucket. */
async function isStored(objectKey: string): Promise<boolean> {
  try {
    await store.client.statObject(store.bucket, objectKey);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === "NotFound" || (err as { code?: string }).code === "NoSuchKey") return false;
    throw err;
  }
}

/** A pre-signed upload slot of a 3-byte markdown file, filled; its id and object key. */
async function filledUpload(): Promise<{ id: string; objectKey: string }> {
  const res = await stack.call("POST", "/v1/uploads", { key, body: { filename: "x.md", size_bytes: 3 } });
  expect(res.status).toBe(200);
  const slot = (await res.json()) as { upload_id: string; upload_url: string };
  expect((await fetch(slot.upload_url, { method: "PUT", body: "# x" })).status).toBe(200);
  const row = await ingestDb("uploads").where({ id: slot.upload_id }).first();
  return { id: slot.upload_id, objectKey: row.object_key };
}

/** Moves an upload slot's expiry `seconds` into the past. */
const expireUpload = (id: string, seconds: number) =>
  ingestDb("uploads")
    .where({ id })
    .update({ expires_at: ingestDb.raw("now() - ?::interval", [`${seconds} seconds`]) });

/** A pass of the sweep over the stack's storage. */
const sweep = () => removeExpiredFiles({ db: ingestDb, store });

describe("upload slots", () => {
  it("removes a slot's object and row an hour after the slot expired, and keeps a slot within that hour", async () => {
    const old = await filledUpload();
    const recent = await filledUpload();
    const live = await filledUpload();
    expect(await isStored(old.objectKey)).toBe(true);
    await expireUpload(old.id, HOUR_S + 60);
    await expireUpload(recent.id, HOUR_S - 60);

    const removed = await sweep();
    expect(removed.upload).toBe(1);
    expect(await isStored(old.objectKey)).toBe(false);
    expect(await ingestDb("uploads").where({ id: old.id }).first()).toBeUndefined();
    // Gone from the caller's view as it was once expired: 404, never a 5xx.
    expect((await stack.call("POST", `/v1/uploads/${old.id}/process`, { key, body: {} })).status).toBe(404);

    for (const kept of [recent, live]) {
      expect(await isStored(kept.objectKey)).toBe(true);
      expect(await ingestDb("uploads").where({ id: kept.id }).first()).toBeDefined();
    }
    // The live slot still converts.
    const processed = await stack.call("POST", `/v1/uploads/${live.id}/process`, {
      key,
      body: { session_id: "retention-live", return_html: true },
    });
    expect(processed.status).toBe(200);
    expect((await sweep()).upload).toBe(0);
  });

  it("removes an expired slot that was never filled (nothing to delete in the store is not an error)", async () => {
    const res = await stack.call("POST", "/v1/uploads", { key, body: { filename: "never.md", size_bytes: 9 } });
    const { upload_id: id } = (await res.json()) as { upload_id: string };
    await expireUpload(id, HOUR_S + 60);
    expect((await sweep()).upload).toBe(1);
    expect(await ingestDb("uploads").where({ id }).first()).toBeUndefined();
  });

  it("keeps every row whose object it could not remove when the store is unreachable, for the next pass", async () => {
    const old = await filledUpload();
    await expireUpload(old.id, HOUR_S + 60);
    const deadStore = createObjectStore({ ...infra.s3, endpoint: `http://127.0.0.1:${await freePort()}` });
    const failed = await removeExpiredFiles({ db: ingestDb, store: deadStore }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(UnavailableError);
    expect(await ingestDb("uploads").where({ id: old.id }).first()).toBeDefined();
    expect(await isStored(old.objectKey)).toBe(true);

    expect((await sweep()).upload).toBe(1);
    expect(await isStored(old.objectKey)).toBe(false);
  });
});

describe("exports", () => {
  /** A stored download of a small HTML file: its id, object key and link. */
  async function download(): Promise<{ id: string; objectKey: string; url: string }> {
    const res = await stack.call("POST", "/v1/downloads", {
      key,
      body: { html: "<h1>Kept</h1><p>For a while.</p>", format: "html", filename: "kept.html" },
    });
    expect(res.status).toBe(200);
    const { download_url: url } = (await res.json()) as { download_url: string };
    const row = await ingestDb("exports").where({ kind: "download" }).orderBy("created_at", "desc").first();
    return { id: row.id, objectKey: row.object_key, url };
  }

  it("removes a download's file an hour after its 15-minute link expired, and keeps a fresh one", async () => {
    const old = await download();
    const fresh = await download();
    expect((await fetch(old.url)).status).toBe(200);
    await ingestDb("exports")
      .where({ id: old.id })
      .update({ created_at: ingestDb.raw("now() - ?::interval", [`${900 + HOUR_S + 60} seconds`]) });

    const removed = await sweep();
    expect(removed.download).toBe(1);
    expect(await isStored(old.objectKey)).toBe(false);
    // The link's signature is still good here (it was moved back in the row only): the store
    // itself no longer has the file.
    expect((await fetch(old.url)).status).toBe(404);
    const row = await ingestDb("exports").where({ id: old.id }).first();
    expect(row.object_removed_at).toBeInstanceOf(Date);
    expect(row.status).toBe("stored");

    expect((await fetch(fresh.url)).status).toBe(200);
    expect((await ingestDb("exports").where({ id: fresh.id }).first()).object_removed_at).toBeNull();
    expect((await sweep()).download).toBe(0);
  });

  it("records the file of an email export whose mail failed, and removes it when its 7-day link would have expired", async () => {
    const loaded = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: {
        filename: "mail.md",
        file_base64: Buffer.from("# Mailed\n\nBody.").toString("base64"),
        session_id: "retention-mail",
      },
    });
    expect(loaded.status).toBe(200);
    const res = await stack.call("POST", "/v1/documents/export/email-request", {
      key,
      body: { session_id: "retention-mail", format: "docx", filename: "mailed", recipient_email: "eve@example.com" },
    });
    expect(res.status).toBe(202);
    const { job_id: id } = (await res.json()) as { job_id: string };
    await until(
      "the mail to fail",
      async () => (await ingestDb("exports").where({ id }).first())?.status === "failed",
      30_000,
    );
    const failed = await ingestDb("exports").where({ id }).first();
    expect(failed.object_key).toMatch(/^exports\/exp_/);
    expect(await isStored(failed.object_key)).toBe(true);

    // A day later it is kept: the mail may have gone out with a 7-day link.
    await ingestDb("exports")
      .where({ id })
      .update({ updated_at: ingestDb.raw("now() - interval '1 day'") });
    expect((await sweep()).email).toBe(0);
    await ingestDb("exports")
      .where({ id })
      .update({ updated_at: ingestDb.raw("now() - ?::interval", [`${7 * 24 * HOUR_S + HOUR_S + 60} seconds`]) });
    expect((await sweep()).email).toBe(1);
    expect(await isStored(failed.object_key)).toBe(false);
    expect((await ingestDb("exports").where({ id }).first()).object_removed_at).toBeInstanceOf(Date);
    // Removed once: a later pass neither finds nor counts it again.
    expect((await sweep()).email).toBe(0);
  });
});

describe("attachments", () => {
  it("removes a deleted attachment's bytes at once, and the sweep removes bytes a deletion left behind", async () => {
    const res = await stack.call("POST", "/v1/attachments/upload-base64", {
      key,
      body: {
        filename: "notes.md",
        file_base64: Buffer.from("# Notes").toString("base64"),
        session_id: "retention-att",
      },
    });
    expect(res.status).toBe(200);
    const { attachment_id: id } = (await res.json()) as { attachment_id: string };
    const row = await ingestDb("attachments").where({ id }).first();
    expect(await isStored(row.object_key)).toBe(true);

    expect((await stack.call("DELETE", `/v1/attachments/${id}`, { key })).status).toBe(200);
    expect(await isStored(row.object_key)).toBe(false);
    expect((await ingestDb("attachments").where({ id }).first()).object_removed_at).toBeInstanceOf(Date);

    // As if the store had refused the removal: the bytes are back and the row says so.
    await store.put(row.object_key, Buffer.from("# Notes"), "text/markdown");
    await ingestDb("attachments").where({ id }).update({ object_removed_at: null });
    expect((await sweep()).attachment).toBe(1);
    expect(await isStored(row.object_key)).toBe(false);
    expect((await sweep()).attachment).toBe(0);
  });
});

describe("originals of loaded documents", () => {
  /** Uploads a markdown file into a new session, or reloads `sessionId`'s focused document; the ids and the original it names. */
  async function upload(
    text: string,
    sessionId?: string,
  ): Promise<{ sessionId: string; documentId: string; sourceId: string }> {
    const res = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: {
        filename: "original.md",
        file_base64: Buffer.from(text).toString("base64"),
        // A new session's blank tab gets a new document; a given one's focused document is reloaded.
        session_id: sessionId ?? `retention-${randomUUID()}`,
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { session_id: string; durable_document_id: string };
    const doc = await documentsDb("documents").where({ id: body.durable_document_id }).first();
    expect(doc.source_id).toMatch(/^src_/);
    return { sessionId: body.session_id, documentId: body.durable_document_id, sourceId: doc.source_id };
  }
  const sourceRow = (id: string) => ingestDb("document_sources").where({ id }).first();
  /** Moves an original's storing `seconds` into the past. */
  const age = (id: string, seconds: number) =>
    ingestDb("document_sources")
      .where({ id })
      .update({ created_at: ingestDb.raw("now() - ?::interval", [`${seconds} seconds`]) });
  /** Whether both of an original's objects (the file and its chunk map) are stored. */
  async function stored(id: string): Promise<[boolean, boolean]> {
    const row = await sourceRow(id);
    return [await isStored(row.object_key), await isStored(row.map_key)];
  }
  /** The owner behind `key`, as its documents record it. */
  const ownerOf = async (documentId: string): Promise<Principal> => {
    const { owner_id: ownerId } = await documentsDb("documents").where({ id: documentId }).first();
    return { userId: "", organizationId: "", ownerId, plan: "" };
  };
  const sweepWithDocuments = () => removeExpiredFiles({ db: ingestDb, store }, library);

  it("removes an original a reload replaced once it is a day old, and keeps the one the document names", async () => {
    const first = await upload("# Alpha\n\nFirst.");
    const second = await upload("# Beta\n\nReplaced.", first.sessionId);
    expect(second.documentId).toBe(first.documentId);
    expect(second.sourceId).not.toBe(first.sourceId);
    const replacedKeys = await sourceRow(first.sourceId);

    // Within the day nothing is asked about or removed.
    await age(first.sourceId, DAY_S - 60);
    expect((await sweepWithDocuments()).source).toBe(0);
    expect(await stored(first.sourceId)).toEqual([true, true]);

    await age(first.sourceId, DAY_S + 60);
    await age(second.sourceId, DAY_S + 60);
    expect((await sweepWithDocuments()).source).toBe(1);
    expect(await sourceRow(first.sourceId)).toBeUndefined();
    expect(await isStored(replacedKeys.object_key)).toBe(false);
    expect(await isStored(replacedKeys.map_key)).toBe(false);
    expect(await stored(second.sourceId)).toEqual([true, true]);
    expect((await sourceRow(second.sourceId)).checked_at).toBeInstanceOf(Date);

    // The document still exports in place from the original it names.
    const res = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: first.sessionId, format: "markdown" },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Replaced.");
  });

  it("asks about a named original again only a day after its last check", async () => {
    const named = await upload("# Gamma\n\nKept.");
    await age(named.sourceId, DAY_S + 60);
    await sweepWithDocuments();
    const checked = (await sourceRow(named.sourceId)).checked_at as Date;
    await sweepWithDocuments();
    expect((await sourceRow(named.sourceId)).checked_at).toEqual(checked);

    await ingestDb("document_sources")
      .where({ id: named.sourceId })
      .update({ checked_at: ingestDb.raw("now() - interval '25 hours'") });
    expect((await sweepWithDocuments()).source).toBe(0);
    expect(((await sourceRow(named.sourceId)).checked_at as Date).getTime()).toBeGreaterThan(checked.getTime());
    expect(await stored(named.sourceId)).toEqual([true, true]);
  });

  it("removes an original no document ever named (a load that failed after storing it), and nothing while documents is unreachable", async () => {
    const { documentId } = await upload("# Delta\n\nFor the owner.");
    const principal = await ownerOf(documentId);
    const ingest = createRpcClient(ingestV1.IngestServiceService, stack.addrs.ingest);
    let sourceId: string;
    try {
      const converted = await ingest.convertDocument(
        { filename: "orphan.md", content: Buffer.from("# Orphan\n\nNever attached."), keepSource: true },
        { principal },
      );
      sourceId = converted.source?.sourceId ?? "";
      expect(sourceId).toMatch(/^src_/);
    } finally {
      ingest.close();
    }
    await age(sourceId, DAY_S + 60);

    const deadDocuments = createRpcClient(
      documentsLibraryV1.DocumentLibraryServiceService,
      `127.0.0.1:${await freePort()}`,
    );
    try {
      const failed = await removeExpiredFiles({ db: ingestDb, store }, deadDocuments).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(Error);
      expect(await stored(sourceId)).toEqual([true, true]);
    } finally {
      deadDocuments.close();
    }

    expect((await sweepWithDocuments()).source).toBe(1);
    expect(await sourceRow(sourceId)).toBeUndefined();
    expect((await sweepWithDocuments()).source).toBe(0);
  });

  it("documents answers only about the caller's own documents, and refuses over 1,000 ids", async () => {
    const { documentId, sourceId } = await upload("# Epsilon\n\nMine.");
    const owner = await ownerOf(documentId);
    const mine = await library.findSourceReferences({ sourceIds: [sourceId, "src_unknown"] }, { principal: owner });
    expect(mine.referencedSourceIds).toEqual([sourceId]);
    const stranger: Principal = { ...owner, ownerId: `${owner.ownerId}-other` };
    const theirs = await library.findSourceReferences({ sourceIds: [sourceId] }, { principal: stranger });
    expect(theirs.referencedSourceIds).toEqual([]);

    const tooMany = Array.from({ length: 1001 }, (_, i) => `src_${i}`);
    const refused = await library
      .findSourceReferences({ sourceIds: tooMany }, { principal: owner })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RemoteError);
    expect((refused as RemoteError).httpStatus).toBe(new InputError("x").httpStatus);
  });
});

describe("the sweep's timer", () => {
  it("runs every FILE_SWEEP_MS in a started ingest service", async () => {
    const old = await filledUpload();
    await expireUpload(old.id, HOUR_S + 60);
    const ingest = await startIngestService({
      grpcAddress: "127.0.0.1:0",
      maxUploadBytes: 1024 * 1024,
      logLevel: "silent",
      converterWorkers: 1,
      databaseUrl: stack.databaseUrl,
      s3: infra.s3,
      fileSweepMs: 100,
    });
    try {
      await until("the sweep to remove the expired upload", async () => !(await isStored(old.objectKey)), 30_000);
      await until(
        "the slot's row to go",
        async () => (await ingestDb("uploads").where({ id: old.id }).first()) === undefined,
        30_000,
      );
    } finally {
      await ingest.close();
    }
  });
});
