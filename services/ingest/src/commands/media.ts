// Images out of converted HTML: each data: image is stored once in the object store under its
// content hash and referenced as /v1/media/{sha256}; the owner gets a row so only they (and
// their organization) can read it back through the gateway.
//
// SVG is refused, never stored: an SVG is a document that can carry scripts, event handlers,
// foreignObject HTML and external references, and sanitizing it needs an SVG-aware sanitizer we
// would have to trust (and keep) on every path that serves it; rasterizing needs a native
// renderer with its own attack surface. Office files carry a raster fallback for their SVGs
// (mammoth reads that one), so what we lose is SVG pasted into HTML uploads.
import { createHash } from "node:crypto";
import { NotFoundError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { findMedia, insertMedia } from "../db/store/media.js";
import { type FilesStorage, requireStorage } from "../storage.js";
import { dropSvgImages } from "../svg-images.js";
import type { ImageResolver } from "./export-document.js";

/** The URL path images are referenced by in stored HTML. */
export const MEDIA_PATH = "/v1/media/";
const DATA_IMAGE = /(<img\b[^>]*?\ssrc=)(["'])data:(image\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]+)\2/gi;
const MEDIA_ID = /^[0-9a-f]{64}$/;
const mediaKey = (id: string) => `media/${id}`;
const isSvg = (type: string) => /svg|xml/i.test(type);

/**
 * Moves every `data:image/*;base64` `<img src>` of `html` into the object store and rewrites the
 * src to /v1/media/{sha256}; SVG images are dropped first (dropSvgImages, which reports into
 * `warnings`). Returns the HTML unchanged when nothing is embedded.
 */
export async function extractMedia(
  storage: FilesStorage,
  ownerId: string,
  source: string,
  warnings?: string[],
): Promise<string> {
  const html = dropSvgImages(source, warnings);
  const found = new Map<string, { id: string; type: string; bytes: Buffer }>();
  for (const m of html.matchAll(DATA_IMAGE)) {
    const dataUrl = `data:${m[3]};base64,${m[4]}`;
    if (found.has(dataUrl)) continue;
    if (isSvg(m[3])) continue;
    const bytes = Buffer.from(m[4].replace(/\s+/g, ""), "base64");
    if (bytes.length === 0) continue;
    found.set(dataUrl, { id: createHash("sha256").update(bytes).digest("hex"), type: m[3].toLowerCase(), bytes });
  }
  if (found.size === 0) return html;
  for (const image of new Map([...found.values()].map((i) => [i.id, i])).values()) {
    await storage.store.put(mediaKey(image.id), image.bytes, image.type);
    await insertMedia(storage.db, {
      owner_id: ownerId,
      id: image.id,
      content_type: image.type,
      size_bytes: image.bytes.length,
    });
  }
  return html.replace(DATA_IMAGE, (whole, pre: string, quote: string, type: string, b64: string) => {
    const image = found.get(`data:${type};base64,${b64}`);
    return image ? `${pre}${quote}${MEDIA_PATH}${image.id}${quote}` : whole;
  });
}

/** Reads one of the owner's images; null when it is not theirs or not stored. */
export async function readMedia(
  storage: FilesStorage,
  ownerId: string,
  id: string,
): Promise<{ bytes: Buffer; contentType: string } | null> {
  if (!MEDIA_ID.test(id)) return null;
  const row = await findMedia(storage.db, ownerId, id);
  if (!row) return null;
  return { bytes: await storage.store.get(mediaKey(id)), contentType: row.content_type };
}

/** An export's image resolver: /v1/media/{id} (relative or absolute URL) of the owner's media. */
export function mediaResolver(ctx: Pick<IngestContext, "storage">, ownerId: string): ImageResolver {
  return async (src) => {
    if (!ctx.storage) return null;
    const at = src.indexOf(MEDIA_PATH);
    if (at < 0) return null;
    const media = await readMedia(ctx.storage, ownerId, src.slice(at + MEDIA_PATH.length).split(/[?#]/)[0]);
    // SVG stored before it was refused is not put into exports either.
    return media && !isSvg(media.contentType) ? media : null;
  };
}

/** The owner's image (bytes and content type); NotFoundError (404) for another owner's or an unknown id. */
export async function getMedia(ctx: IngestContext, ownerId: string, id: string) {
  const media = await readMedia(requireStorage(ctx), ownerId, id);
  if (!media) throw new NotFoundError("Media not found");
  return media;
}
