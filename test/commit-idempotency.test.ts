// CommitOperations with an idempotency key commits once: a job rerun after its worker died
// between the commit and recording it replays the first commit instead of writing again.
import { documentsV1 } from "@redline/grpc-stubs";
import type { Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTermsDocument } from "./support/documents-rpc.js";
import { principalOf, startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let principal: Principal;

beforeAll(async () => {
  let key: string;
  ({ stack, key } = await startStackWithKey({ name: "idempotency" }, "ivy"));
  principal = await principalOf(stack, key);
});
afterAll(() => stack?.close());

describe("commit idempotency", () => {
  it("writes one version for two commits with the same key, and another for a new key", async () => {
    await withTermsDocument(stack, principal, async (documents, created) => {
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
      // The first call's answer again (what a job taken over after its commit reports), new ids.
      const withoutId = (cs: typeof first.changes) => cs.map(({ changeId: _id, ...c }) => c);
      expect(withoutId(again.changes)).toEqual(withoutId(first.changes));
      expect(again.changes[0].newHtml).toContain("Pay in 14 days.");
      expect(again.document?.versionId).toBe(first.document?.versionId);
      expect(again.chunks.map((c) => c.html).join("")).toContain("Pay in 14 days.");
      const versions = await stack.documentsDb("documents.versions").where({ document_id: documentId });
      expect(versions).toHaveLength(2);

      const next = await commit("Pay in 7 days.", "job_x:1", first.document?.versionId);
      expect(next.replayed).toBe(false);
      expect(next.chunks.map((c) => c.html).join("")).toContain("Pay in 7 days.");
    });
  });
});
