// SQL of ingest.media: which owner may read which stored image.
import type { Knex } from "@redline/service-kit";
import type { MediaRow } from "../tables.js";

/** Grants `row.owner_id` the image; a second grant of the same image is a no-op. */
export async function insertMedia(db: Knex, row: Omit<MediaRow, "created_at">): Promise<void> {
  await db<MediaRow>("media").insert(row).onConflict(["owner_id", "id"]).ignore();
}

/** The owner's image row; undefined when it is not theirs. */
export function findMedia(db: Knex, ownerId: string, id: string): Promise<MediaRow | undefined> {
  return db<MediaRow>("media").where({ owner_id: ownerId, id }).first();
}
