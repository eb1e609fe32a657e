// Change records between two chunk lists of one document (unshown-parts.md, Change records):
// what a retried commit reports for the version it wrote (commit.ts) and what a version diff
// answers (version-diff.ts), so both read a version's changes the same way.
import type { ChunkRevisionRow } from "../db/tables.js";
import type { ChangeRecordView } from "./commit-plan.js";

/** A chunk of a version, in document order. */
export type ChunkAt = Pick<ChunkRevisionRow, "chunk_id" | "html">;

/** The record's fields besides its id and explanation. */
export type ChangeFields = Pick<
  ChangeRecordView,
  "operation" | "chunkId" | "oldHtml" | "newHtml" | "insertAfterChunkId"
>;

/**
 * The change records turning `before` into `after`: an edit per chunk whose HTML differs, a
 * create per new chunk (after the chunk before it in `after`, "" at the start), in `after`'s
 * order, then a delete per chunk gone, in `before`'s order. A chunk that only moved is not a
 * change. `changeId` and `explanation` name each record (a commit's fresh UUIDs and its
 * operations' words; a diff's derived ids).
 */
export function chunkChanges(
  documentId: string,
  before: ChunkAt[],
  after: ChunkAt[],
  name: { changeId: (c: ChangeFields) => string; explanation: (chunkId: string) => string },
): ChangeRecordView[] {
  const record = (c: ChangeFields): ChangeRecordView => ({
    changeId: name.changeId(c),
    documentId,
    ...c,
    aiExplanation: name.explanation(c.chunkId),
  });
  const old = new Map(before.map((c) => [c.chunk_id, c.html]));
  const kept = new Set(after.map((c) => c.chunk_id));
  const changes: ChangeRecordView[] = [];
  after.forEach((c, i) => {
    const was = old.get(c.chunk_id);
    if (was === c.html) return;
    const base = { chunkId: c.chunk_id, oldHtml: was ?? "", newHtml: c.html };
    if (was !== undefined) changes.push(record({ ...base, operation: "edit", insertAfterChunkId: "" }));
    else changes.push(record({ ...base, operation: "create", insertAfterChunkId: after[i - 1]?.chunk_id ?? "" }));
  });
  for (const c of before) {
    if (!kept.has(c.chunk_id)) {
      changes.push(
        record({ operation: "delete", chunkId: c.chunk_id, oldHtml: c.html, newHtml: "", insertAfterChunkId: "" }),
      );
    }
  }
  return changes;
}
