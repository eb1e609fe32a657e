// The documents service called directly over gRPC, for edits only an agent makes (commits with
// operations and idempotency keys) that no gateway route exposes.
import { documentsV1 } from "@redline/grpc-stubs";
import { createRpcClient, type Principal } from "@redline/service-kit";
import type { TestStack } from "./stack.js";

/** A gRPC client of the documents service. */
export type DocumentsRpc = ReturnType<typeof createRpcClient<typeof documentsV1.DocumentsServiceService>>;

/** What CreateDocument answers: the document and its chunks. */
export type CreatedDocument = Awaited<ReturnType<DocumentsRpc["createDocument"]>>;

/**
 * Creates "<h1>Terms</h1><p>Pay in 30 days.</p>" (two chunks) as `principal` in session "s1"
 * through a documents client, runs `use` with both, and closes the client.
 */
export async function withTermsDocument<T>(
  stack: TestStack,
  principal: Principal,
  use: (documents: DocumentsRpc, created: CreatedDocument) => Promise<T>,
): Promise<T> {
  const documents = createRpcClient(documentsV1.DocumentsServiceService, stack.addrs.documents);
  try {
    const created = await documents.createDocument(
      { html: "<h1>Terms</h1><p>Pay in 30 days.</p>", title: "", sessionId: "s1" },
      { principal },
    );
    return await use(documents, created);
  } finally {
    documents.close();
  }
}
