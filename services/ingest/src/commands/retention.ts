// The expired-file sweep (docs/security.md, "Retention"): a stored file that no link or row can reach
// any more leaves the object store. An upload slot's object goes an hour after its 300 s PUT link
// expired (the slot answers 404 from then on), a download's file an hour after its 15-minute
// link, a mailed export's an hour after its 7-day link, and a deleted attachment's bytes as soon
// as the sweep sees them (deleteAttachment removes them at once; this catches a removal the store
// refused). The hour lets a read or a download that began before the expiry finish. A loaded
// document's original goes once no document names it (documents answers FindSourceReferences):
// a load that failed after storing it, a retried upload's second copy, a document reloaded from
// another file.
import {
  type Clients,
  counter,
  METRICS_PREFIX,
  type Periodic,
  type Principal,
  startPeriodic,
} from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import {
  deletedAttachmentObjects,
  deleteSources,
  deleteUploads,
  type ExpiredObject,
  expiredExports,
  expiredUploads,
  markAttachmentsRemoved,
  markExportsRemoved,
  markSourcesChecked,
  type SourceToCheck,
  sourcesToCheck,
} from "../db/store/retention.js";
import type { FilesStorage } from "../storage.js";
import { DOWNLOAD_TTL_SECONDS, EMAIL_LINK_TTL_SECONDS } from "./deliveries.js";

/** How often the sweep runs by default (FILE_SWEEP_MS), in ms. */
export const DEFAULT_FILE_SWEEP_MS = 600_000;
/** How long after its link expired a file is kept, in seconds. */
export const EXPIRED_FILE_GRACE_SECONDS = 3600;
/**
 * How old a stored original must be before documents is asked whether a document names it, in
 * seconds: a load stores it before the document naming it is created, at the latest when the
 * turn's engine finished (an async chat's AI cap is 30 minutes), so a day leaves room to spare.
 */
export const SOURCE_CLAIM_GRACE_SECONDS = 86_400;
/** How long a referenced original goes unchecked, in seconds: a reload may replace it meanwhile. */
export const SOURCE_RECHECK_SECONDS = 86_400;
/** Rows read per query; a pass goes on until a batch comes back short. */
const BATCH = 500;
/** FindSourceReferences' deadline, ms. */
const REFERENCES_TIMEOUT_MS = 30_000;

/** Documents' library client: which originals an owner's documents name. */
export type SourceReferences = Clients<"library">["library"];

const removedFiles = counter(
  `${METRICS_PREFIX}ingest_expired_files_removed_total`,
  "Stored files the expired-file sweep removed from the object store, by kind (upload, download, email, attachment, source).",
  ["kind"],
);

/** Files one pass removed, by kind. */
export interface RemovedFiles {
  upload: number;
  download: number;
  email: number;
  attachment: number;
  /** Originals no document names (both objects: the file and its chunk map). */
  source: number;
}

/**
 * One pass of the sweep over `storage`: removes every object due (see the file's head) and records
 * it (an upload slot's or an original's row is dropped; an export or attachment row gets
 * object_removed_at). Originals are swept only with `documents`, which says which ones its
 * documents name; without it (convert-only tools) they stay. Throws the store's error
 * (UnavailableError when it cannot be reached), documents' or Postgres's after recording what
 * was removed, so the next pass takes up the rest. Several ingest processes may sweep at once:
 * removing an object twice is harmless.
 */
export async function removeExpiredFiles(storage: FilesStorage, documents?: SourceReferences): Promise<RemovedFiles> {
  const { db, store } = storage;
  const counts: RemovedFiles = { upload: 0, download: 0, email: 0, attachment: 0, source: 0 };
  /** Removes the rows `due` answers until it says there are no more; `more`: its batch was full. */
  const drain = async <R extends ExpiredObject>(
    due: () => Promise<{ rows: R[]; more: boolean }>,
    record: (ids: string[]) => Promise<void>,
    kindOf: (row: R) => keyof RemovedFiles,
    keysOf: (row: R) => string[] = (row) => [row.object_key],
  ) => {
    for (;;) {
      const { rows, more } = await due();
      const removed: R[] = [];
      try {
        for (const row of rows) {
          for (const key of keysOf(row)) await store.remove(key);
          removed.push(row);
        }
      } finally {
        // A row says "removed" only after its objects are; what a pass the store cut short did
        // remove is still recorded and counted.
        await record(removed.map((r) => r.id));
        for (const row of removed) {
          counts[kindOf(row)]++;
          removedFiles.inc({ kind: kindOf(row) });
        }
      }
      if (!more) return;
    }
  };
  const batch = <R>(rows: R[]) => ({ rows, more: rows.length === BATCH });
  await drain(
    async () => batch(await expiredUploads(db, EXPIRED_FILE_GRACE_SECONDS, BATCH)),
    (ids) => deleteUploads(db, ids),
    () => "upload",
  );
  await drain(
    async () =>
      batch(
        await expiredExports(
          db,
          { downloadSeconds: DOWNLOAD_TTL_SECONDS, emailSeconds: EMAIL_LINK_TTL_SECONDS },
          EXPIRED_FILE_GRACE_SECONDS,
          BATCH,
        ),
      ),
    (ids) => markExportsRemoved(db, ids),
    (row) => row.kind,
  );
  await drain(
    async () => batch(await deletedAttachmentObjects(db, BATCH)),
    (ids) => markAttachmentsRemoved(db, ids),
    () => "attachment",
  );
  if (documents)
    await drain(
      async () => {
        const due = await sourcesToCheck(db, SOURCE_CLAIM_GRACE_SECONDS, SOURCE_RECHECK_SECONDS, BATCH);
        const named = await referencedSources(documents, due);
        await markSourcesChecked(db, [...named]);
        return { rows: due.filter((r) => !named.has(r.id)), more: due.length === BATCH };
      },
      (ids) => deleteSources(db, ids),
      () => "source",
      (row) => [row.object_key, row.map_key],
    );
  return counts;
}

/**
 * The ids of `sources` that a document of their owner names, asked of documents once per owner
 * as that owner (documents answers only about the caller's own documents). Throws documents'
 * error, so an unreachable documents removes nothing.
 */
async function referencedSources(documents: SourceReferences, sources: SourceToCheck[]): Promise<Set<string>> {
  const byOwner = new Map<string, string[]>();
  for (const s of sources) {
    const ids = byOwner.get(s.owner_id);
    if (ids) ids.push(s.id);
    else byOwner.set(s.owner_id, [s.id]);
  }
  const named = new Set<string>();
  for (const [ownerId, sourceIds] of byOwner) {
    // The sweep acts for the owner of the rows it asks about, as the request that stored them did.
    const principal: Principal = { userId: "", organizationId: "", ownerId, plan: "" };
    const { referencedSourceIds } = await documents.findSourceReferences(
      { sourceIds },
      { principal, timeoutMs: REFERENCES_TIMEOUT_MS },
    );
    for (const id of referencedSourceIds) named.add(id);
  }
  return named;
}

/**
 * Runs removeExpiredFiles every `periodMs` (startPeriodic: one pass at a time, a failed one logged
 * and retried), with the context's documents client when it has one.
 */
export function startFileSweep(
  ctx: Pick<IngestContext, "log" | "library">,
  storage: FilesStorage,
  periodMs: number,
): Periodic {
  return startPeriodic("removing expired files", periodMs, ctx.log, async () => {
    const removed = await removeExpiredFiles(storage, ctx.library ?? undefined);
    if (Object.values(removed).some((n) => n > 0)) ctx.log.info({ removed }, "removed expired files");
  });
}
