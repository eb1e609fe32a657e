// ListVersions and GetVersion through the real gRPC server: the wiring, owner scoping from the
// call's principal, and NOT_FOUND crossing the wire as a 404 naming the missing thing.

import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import { createRpcClient, type Principal, RemoteError, required } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningDocumentsService, startDocumentsService } from "../service.js";

const alice: Principal = { userId: "alice", organizationId: "", ownerId: "alice", plan: "core" };
const bob: Principal = { ...alice, userId: "bob", ownerId: "bob" };
let service: RunningDocumentsService;
let documents: ReturnType<typeof createRpcClient<typeof documentsV1.DocumentsServiceService>>;
let library: ReturnType<typeof createRpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>>;

beforeAll(async () => {
  const infra = inject("infra");
  const databaseUrl = await createTestDatabase(infra.databaseUrl, "unit_documents_rpc");
  service = await startDocumentsService({
    grpcAddress: "127.0.0.1:0",
    databaseUrl,
    natsUrl: infra.natsUrl,
    logLevel: "silent",
  });
  documents = createRpcClient(documentsV1.DocumentsServiceService, service.address);
  library = createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, service.address);
});
afterAll(async () => {
  documents.close();
  library.close();
  await service.close();
});

describe("ListVersions / GetVersion over gRPC", () => {
  it("lists the caller's versions newest first and returns one with its HTML", async () => {
    const html = `<p data-chunk-id="c_a">A</p><p data-chunk-id="c_b">B</p>`;
    const created = await documents.createDocument({ html, title: "", sessionId: "s1" }, { principal: alice });
    const doc = required(created.document, "document");
    await documents.commitOperations(
      {
        documentId: doc.documentId,
        baseVersionId: doc.versionId,
        sessionId: "s2",
        operations: [
          {
            kind: documentsV1.OperationKind.OPERATION_KIND_DELETE,
            chunkId: "c_b",
            html: "",
            afterChunkId: "",
            explanation: "",
          },
        ],
        summary: "drop b",
        returnChunks: false,
        idempotencyKey: "",
      },
      { principal: alice },
    );
    const list = await library.listVersions({ documentId: doc.documentId, limit: 0, offset: 0 }, { principal: alice });
    expect(list.total).toBe(2);
    expect(list.versions.map((v) => [v.seq, v.kind, v.chunksChanged, v.summary, v.sessionId])).toEqual([
      [2, "edit", 1, "drop b", "s2"],
      [1, "create", 2, "created", "s1"],
    ]);
    expect(Number.isNaN(Date.parse(list.versions[0].createdAt))).toBe(false);
    const one = await library.getVersion(
      { documentId: doc.documentId, versionId: doc.versionId, includeHtml: true },
      { principal: alice },
    );
    expect(required(one.version, "version").seq).toBe(1);
    expect(one.html).toBe(`<p data-chunk-id="c_a">A</p>\n<p data-chunk-id="c_b">B</p>`);

    const missing = await library
      .listVersions({ documentId: doc.documentId, limit: 0, offset: 0 }, { principal: bob })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RemoteError);
    expect((missing as RemoteError).httpStatus).toBe(404);
    const noVersion = await library
      .getVersion(
        { documentId: doc.documentId, versionId: crypto.randomUUID(), includeHtml: false },
        { principal: alice },
      )
      .catch((e: unknown) => e);
    expect((noVersion as RemoteError).httpStatus).toBe(404);
    expect((noVersion as RemoteError).message).toMatch(/Version not found/);
  });
});
