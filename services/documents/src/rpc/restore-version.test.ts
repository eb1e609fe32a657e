// RestoreVersion and DiffVersions through the real gRPC server: the restore is attributed to the
// calling user (never to a request field), the 409 for an archived document and the 404s cross
// the wire with their status, and the diff's records arrive as documents.v1.ChangeRecord.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import { createRpcClient, type Principal, RemoteError, required } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningDocumentsService, startDocumentsService } from "../service.js";

const alice: Principal = { userId: "alice", userName: "Alice", organizationId: "", ownerId: "alice", plan: "core" };
const bob: Principal = { ...alice, userId: "bob", userName: "Bob", ownerId: "bob" };
let service: RunningDocumentsService;
let documents: ReturnType<typeof createRpcClient<typeof documentsV1.DocumentsServiceService>>;
let library: ReturnType<typeof createRpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>>;

beforeAll(async () => {
  const infra = inject("infra");
  const databaseUrl = await createTestDatabase(infra.databaseUrl, "unit_documents_rpc_restore");
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

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e as RemoteError).httpStatus,
  );

describe("RestoreVersion / DiffVersions over gRPC", () => {
  it("restores as the calling user, diffs the change back, and maps 404 and 409", async () => {
    const html = `<p data-chunk-id="c_a">A</p><p data-chunk-id="c_b">B</p>`;
    const created = await documents.createDocument({ html, title: "", sessionId: "s1" }, { principal: alice });
    const doc = required(created.document, "document");
    const replaced = await documents.replaceDocument(
      { documentId: doc.documentId, html: `<p data-chunk-id="c_a">A2</p>`, sessionId: "s1", title: "" },
      { principal: alice },
    );
    const v2 = required(replaced.document, "document").versionId;

    const res = await library.restoreVersion(
      { documentId: doc.documentId, versionId: doc.versionId, sessionId: "s2" },
      { principal: alice },
    );
    const version = required(res.version, "version");
    expect(res.restored).toBe(true);
    expect(res.changedChunkIds.sort()).toEqual(["c_a", "c_b"]);
    expect(version).toMatchObject({ seq: 3, kind: "restore", author: "Alice", authorKind: "user", sessionId: "s2" });

    const diff = await library.diffVersions(
      { documentId: doc.documentId, versionId: version.versionId, againstVersionId: v2 },
      { principal: alice },
    );
    expect(required(diff.against, "against").versionId).toBe(v2);
    expect(diff.changes.map((c) => [c.operation, c.chunkId, c.newHtml])).toEqual([
      ["edit", "c_a", `<p data-chunk-id="c_a">A</p>`],
      ["create", "c_b", `<p data-chunk-id="c_b">B</p>`],
    ]);

    const restoreAs = (principal: Principal, versionId = doc.versionId) =>
      library.restoreVersion({ documentId: doc.documentId, versionId, sessionId: "" }, { principal });
    expect(await statusOf(restoreAs(bob))).toBe(404);
    expect(await statusOf(restoreAs(alice, crypto.randomUUID()))).toBe(404);
    const diffAs = (principal: Principal) =>
      library.diffVersions({ documentId: doc.documentId, versionId: v2, againstVersionId: "" }, { principal });
    expect(await statusOf(diffAs(bob))).toBe(404);
    await library.archiveDocument({ documentId: doc.documentId, sessionId: "" }, { principal: alice });
    const archived = await restoreAs(alice, v2).catch((e: unknown) => e);
    expect(archived).toBeInstanceOf(RemoteError);
    expect((archived as RemoteError).httpStatus).toBe(409);
    expect((archived as RemoteError).body).toMatchObject({ code: "document_archived" });
  });
});
