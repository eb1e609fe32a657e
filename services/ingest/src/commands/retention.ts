// The expired-file sweep (README, Security model, "Retention"): a stored file that no link or row can reach
// any more leaves the object store. An upload slot's object goes an hour after its 300 s PUT link
// expired (the slot answers 404 from then on), a download's file an hour after its 15-minute
// link, a mailed export's an hour after its 7-day link, and a deleted attachment's bytes as soon
// as the sweep sees them (deleteAttachment removes them at once; this catches a removal the store
// refused). The hour lets a read or a download that began before the expiry finish.
import { counter, METRICS_PREFIX, type Periodic, startPeriodic } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import {
  deletedAttachmentObjects,
  deleteUploads,
  type ExpiredObject,
  expiredExports,
  expiredUploads,
  markAttachmentsRemoved,
  markExportsRemoved,
} from "../db/store/retention.js";
import { DOWNLOAD_TTL_SECONDS, EMAIL_LINK_TTL_SECONDS } from "./deliveries.js";
import type { FilesStorage } from "./shared.js";

/** How often the sweep runs by default (FILE_SWEEP_MS), in ms. */
export const DEFAULT_FILE_SWEEP_MS = 600_000;
/** How long after its link expired a file is kept, in seconds. */
export const EXPIRED_FILE_GRACE_SECONDS = 3600;
/** Rows read per query; a pass goes on until a batch comes back short. */
const BATCH = 500;

const removedFiles = counter(
  `${METRICS_PREFIX}ingest_expired_files_removed_total`,
  "Stored files the expired-file sweep removed from the object store, by kind (upload, download, email, attachment).",
  ["kind"],
);

/** Files one pass removed, by kind. */
export interface RemovedFiles {
  upload: number;
  download: number;
  email: number;
  attachment: number;
}

/**
 * One pass of the sweep over `storage`: removes every object due (see the file's head) and records
 * it (an upload slot's row is dropped; an export or attachment row gets object_removed_at).
 * Throws the store's error (UnavailableError when it cannot be reached) or Postgres's after
 * recording what was removed, so the next pass takes up the rest. Several ingest processes may
 * sweep at once: removing an object twice is harmless.
 */
export async function removeExpiredFiles(storage: FilesStorage): Promise<RemovedFiles> {
  const { db, store } = storage;
  const counts: RemovedFiles = { upload: 0, download: 0, email: 0, attachment: 0 };
  const drain = async <R extends ExpiredObject>(
    due: () => Promise<R[]>,
    record: (ids: string[]) => Promise<void>,
    kindOf: (row: R) => keyof RemovedFiles,
  ) => {
    for (;;) {
      const rows = await due();
      const removed: R[] = [];
      try {
        for (const row of rows) {
          await store.remove(row.object_key);
          removed.push(row);
        }
      } finally {
        // A row says "removed" only after its object is; what a pass the store cut short did
        // remove is still recorded and counted.
        await record(removed.map((r) => r.id));
        for (const row of removed) {
          counts[kindOf(row)]++;
          removedFiles.inc({ kind: kindOf(row) });
        }
      }
      if (rows.length < BATCH) return;
    }
  };
  await drain(
    () => expiredUploads(db, EXPIRED_FILE_GRACE_SECONDS, BATCH),
    (ids) => deleteUploads(db, ids),
    () => "upload",
  );
  await drain(
    () =>
      expiredExports(
        db,
        { downloadSeconds: DOWNLOAD_TTL_SECONDS, emailSeconds: EMAIL_LINK_TTL_SECONDS },
        EXPIRED_FILE_GRACE_SECONDS,
        BATCH,
      ),
    (ids) => markExportsRemoved(db, ids),
    (row) => row.kind,
  );
  await drain(
    () => deletedAttachmentObjects(db, BATCH),
    (ids) => markAttachmentsRemoved(db, ids),
    () => "attachment",
  );
  return counts;
}

/** Runs removeExpiredFiles every `periodMs` (startPeriodic: one pass at a time, a failed one logged and retried). */
export function startFileSweep(ctx: Pick<IngestContext, "log">, storage: FilesStorage, periodMs: number): Periodic {
  return startPeriodic("removing expired files", periodMs, ctx.log, async () => {
    const removed = await removeExpiredFiles(storage);
    if (Object.values(removed).some((n) => n > 0)) ctx.log.info({ removed }, "removed expired files");
  });
}
