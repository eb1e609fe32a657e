// Proto chunk operations → the plain operations commands apply.
import { documentsV1 } from "@redline/grpc-stubs";
import type { ChunkOperation } from "@redline/html-chunks";
import { InputError } from "@redline/service-kit";

const OP_KINDS: Record<number, ChunkOperation["kind"] | undefined> = {
  [documentsV1.OperationKind.OPERATION_KIND_REPLACE]: "replace",
  [documentsV1.OperationKind.OPERATION_KIND_INSERT]: "insert",
  [documentsV1.OperationKind.OPERATION_KIND_DELETE]: "delete",
};

function toOperation(op: documentsV1.ChunkOperation, index: number): ChunkOperation {
  const kind = OP_KINDS[op.kind];
  if (!kind) throw new InputError(`operation ${index}: kind is required`);
  if (!op.chunkId) throw new InputError(`operation ${index}: chunk_id is required`);
  const { chunkId, html, explanation } = op;
  if (kind === "insert") return { kind, chunkId, html, afterChunkId: op.afterChunkId || null, explanation };
  if (kind === "replace") return { kind, chunkId, html, explanation };
  return { kind, chunkId, explanation };
}

/** The operations of a request, in order. InputError (400) naming the index of one without a kind or chunk id. */
export function toOperations(ops: documentsV1.ChunkOperation[]): ChunkOperation[] {
  return ops.map(toOperation);
}
