// DELETE /v1/users/me/cross-session-memory (interface-spec endpoint 4): clears the account-level
// memory note, or one end-customer's note when memory_key is given. Owner-scoped, idempotent.
import { defineRoute } from "../route-registry.js";
import { ClearMemoryResponseSchema, MemoryQuerySchema } from "../schemas-documents.js";

/** `{removed, memory_key}`; removed is 0 when nothing existed. */
export const clearMemoryRoute = defineRoute({
  method: "delete",
  path: "/v1/users/me/cross-session-memory",
  operationId: "clearCrossSessionMemory",
  summary: "Clear memory note",
  tags: ["memory"],
  auth: true,
  query: MemoryQuerySchema,
  response: { description: "How many notes were removed.", schema: ClearMemoryResponseSchema },
  errors: [503],
  async handle({ query }, call) {
    const res = await call.ctx.workspace.clearMemoryNote({ memoryKey: query.memory_key ?? "" }, call.rpc());
    return { body: { removed: res.removed, memory_key: query.memory_key ?? null } };
  },
});
