// The source store: a loaded document's original bytes and chunk map in the object store, under
// the owner's prefix, with a row naming the owner. Only that owner's calls ever read it back.
import type { Logger } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { findSource, insertSource } from "../db/store/sources.js";
import type { DocumentSource, SourceFormat, SourceMap } from "../sources/types.js";
import { newId } from "./shared.js";

const FORMATS: readonly SourceFormat[] = ["docx", "markdown", "txt"];
const ID = /^src_[0-9a-f]{32}$/;

/** The object store prefix of an owner's originals (owner ids are opaque: kept URL-safe). */
export const sourcePrefix = (ownerId: string) => `sources/${encodeURIComponent(ownerId)}/`;

/** A stored original's id and format, as carried to documents (SourceRef). */
export interface StoredSource {
  sourceId: string;
  format: SourceFormat;
}

/**
 * Keeps `bytes` and `map` for `ownerId`: both objects first, then the row, so a row always
 * names objects that exist. Returns null when the service runs without storage (convert-only
 * tools), in which case the document simply exports as generated.
 */
export async function storeSource(
  ctx: Pick<IngestContext, "storage">,
  ownerId: string,
  input: { filename: string; bytes: Buffer; map: SourceMap },
): Promise<StoredSource | null> {
  const storage = ctx.storage;
  if (!storage) return null;
  const id = newId("src");
  const key = `${sourcePrefix(ownerId)}${id}`;
  const mapKey = `${key}.map.json`;
  await storage.store.put(key, input.bytes, "application/octet-stream");
  await storage.store.put(mapKey, Buffer.from(JSON.stringify(input.map), "utf8"), "application/json");
  await insertSource(storage.db, {
    id,
    owner_id: ownerId,
    format: input.map.format,
    filename: input.filename.slice(0, 512),
    size_bytes: input.bytes.length,
    object_key: key,
    map_key: mapKey,
  });
  return { sourceId: id, format: input.map.format };
}

/**
 * The owner's original `sourceId` as an exporter takes it, with `loaded` (chunk id → HTML at
 * the load version). Undefined (the export is generated as for a document without one) when
 * the id is malformed, unknown, another owner's, of another format than `format`, or its
 * objects cannot be read; never an error: the caller's export must not fail for it.
 */
export async function loadSource(
  ctx: Pick<IngestContext, "storage">,
  ownerId: string,
  ref: { sourceId: string; format: string; loaded: Record<string, string> },
  format: SourceFormat,
  log?: Logger,
): Promise<DocumentSource | undefined> {
  const storage = ctx.storage;
  if (!storage || !ID.test(ref.sourceId) || ref.format !== format) return undefined;
  const row = await findSource(storage.db, ownerId, ref.sourceId);
  if (!row || row.format !== format || !FORMATS.includes(format)) return undefined;
  try {
    const [bytes, mapJson] = await Promise.all([storage.store.get(row.object_key), storage.store.get(row.map_key)]);
    const map = JSON.parse(mapJson.toString("utf8")) as SourceMap;
    return { format, bytes, map, loaded: ref.loaded };
  } catch (err) {
    log?.warn({ err, sourceId: row.id }, "document source unreadable; exporting as generated");
    return undefined;
  }
}
