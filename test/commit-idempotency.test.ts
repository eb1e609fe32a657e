// CommitOperations with an idempotency key commits once: a job rerun after its worker died
// between the commit and recording it replays the first commit instead of writing again.
import { documentsV1 } from "@redline/grpc-stubs";
import { createRpcClient, type Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let principal: Principal;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "idempotency" });
  const key = await stack.createKey("ivy");
  const resolved = (await stack.billing.resolveApiKey({ apiKey: key })).principal;
  if (!resolved) throw new Error("no principal");
  principal = resolved;
});
afterAll(async () => {
  await stack?.close();
});

describe("commit idempotency", () => {
  it("writes one version for two commits with the same key, and another for a new key", async () => {
    const documents = createRpcClient(documentsV1.DocumentsServiceService, stack.addrs.documents);
    try {
      const created = await documents.createDocument(
        { html: "<h1>Terms</h1><p>Pay in 30 days.</p>", title: "", pageSetupJson: "", sessionId: "s1" },
        { principal },
      );
      const documentId = created.document?.documentId ?? "";
      const paragraph = created.chunks[1].chunkId;
      const commit = (html: string, idempotencyKey: string, baseVersionId = created.document?.versionId ?? "") =>
        documents.commitOperations(
          {
            documentId,
            baseVersionId,
            sessionId: "s1",
            summary: "edit",
            returnChunks: true,
            operations: [
              {
                kind: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
                chunkId: paragraph,
                html: `<p>${html}</p>`,
                afterChunkId: "",
                explanation: "test",
              },
            ],
            idempotencyKey,
          },
          { principal },
        );
      const first = await commit("Pay in 14 days.", "job_x:0");
      const again = await commit("Pay in 7 days.", "job_x:0");
      expect(first.replayed).toBe(false);
      expect(first.changes).toHaveLength(1);
      expect(again.replayed).toBe(true);
      expect(again.changes).toEqual([]);
      expect(again.document?.versionId).toBe(first.document?.versionId);
      expect(again.chunks.map((c) => c.html).join("")).toContain("Pay in 14 days.");
      const versions = await stack.documentsDb("documents.versions").where({ document_id: documentId });
      expect(versions).toHaveLength(2);

      const next = await commit("Pay in 7 days.", "job_x:1", first.document?.versionId);
      expect(next.replayed).toBe(false);
      expect(next.chunks.map((c) => c.html).join("")).toContain("Pay in 7 days.");
    } finally {
      documents.close();
    }
  });
});
