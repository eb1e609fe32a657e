// The storage-backed half of the service (Postgres and the object store), owned here so the
// composition root (context.ts), the commands and the workers share one definition.
import { type Knex, type ObjectStore, UnavailableError } from "@redline/service-kit";

/** Storage-backed pieces; null when the service runs without a database or object store. */
export interface FilesStorage {
  db: Knex;
  store: ObjectStore;
}

/** The storage, or UnavailableError (503) when this ingest runs without a database and object store. */
export function requireStorage(ctx: { storage: FilesStorage | null }): FilesStorage {
  if (!ctx.storage)
    throw new UnavailableError("File storage is not configured for the ingest service (DATABASE_URL and S3_*)");
  return ctx.storage;
}
