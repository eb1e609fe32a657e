// S3-compatible object storage through the minio client (MinIO, s3rver or AWS S3).
import { Client } from "minio";
import { isNetworkFailure, UnavailableError } from "./errors.js";

/** Where the bucket lives. `endpoint` is a URL such as http://127.0.0.1:8439. */
export interface S3Config {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
}

/** A client bound to one bucket. */
export interface ObjectStore {
  client: Client;
  bucket: string;
  /** Creates the bucket when missing. */
  ensureBucket(): Promise<void>;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Deletes one object; a key already gone is not an error (S3's DeleteObject answers 204 alike). */
  remove(key: string): Promise<void>;
  /** A PUT link valid `ttlSeconds` (at most 604800) for one object: a bearer credential to write it until then. */
  presignUpload(key: string, ttlSeconds: number): Promise<string>;
  /**
   * A GET link valid `ttlSeconds` (at most 604800) whose response the store sends as a download:
   * the link is signed with response-content-disposition (attachment, sanitized `filename`) and
   * response-content-type overrides, which S3, MinIO and s3rver honour. The link is a bearer
   * credential for the object until it expires (docs/security.md).
   */
  presignDownload(key: string, ttlSeconds: number, file: { filename: string; contentType: string }): Promise<string>;
  /** Health probe. */
  ping(): Promise<void>;
}

/** A 503 naming the object store when `err` is a failure to reach it; null for any other error (NoSuchKey...). */
export function objectStoreUnavailable(err: unknown): UnavailableError | null {
  return isNetworkFailure(err)
    ? new UnavailableError("The object store (S3) is unavailable; retry shortly", { retryAfterSeconds: 2 })
    : null;
}

/** Rethrows a store that cannot be reached as a 503 naming it; any other error as it is. */
function storeFailure(err: unknown): never {
  throw objectStoreUnavailable(err) ?? err;
}

/** A minio client for `endpoint` (an origin such as http://127.0.0.1:8439; path-style addressing). */
function minioClient(cfg: S3Config, endpoint: string): Client {
  const url = new URL(endpoint);
  const useSSL = url.protocol === "https:";
  return new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: cfg.accessKey,
    secretKey: cfg.secretKey,
    // Set, so signing links never asks the store for the bucket's region.
    region: cfg.region,
    pathStyle: true,
  });
}

/**
 * Builds an object store client from config (path-style addressing, as s3rver and MinIO need).
 * `publicEndpoint` (S3_PUBLIC_ENDPOINT, an origin without a path) is the address clients reach
 * the store at: pre-signed links are signed for it, since SigV4 signs the Host header (a link
 * signed for the internal host and rewritten afterwards would fail its signature check).
 */
export function createObjectStore(cfg: S3Config, opts: { publicEndpoint?: string } = {}): ObjectStore {
  const client = minioClient(cfg, cfg.endpoint);
  const signer = opts.publicEndpoint ? minioClient(cfg, opts.publicEndpoint) : client;
  return {
    client,
    bucket: cfg.bucket,
    async ensureBucket() {
      if (!(await client.bucketExists(cfg.bucket))) await client.makeBucket(cfg.bucket, cfg.region);
    },
    async put(key, body, contentType) {
      await client.putObject(cfg.bucket, key, body, body.length, { "Content-Type": contentType }).catch(storeFailure);
    },
    async get(key) {
      try {
        const stream = await client.getObject(cfg.bucket, key);
        const parts: Buffer[] = [];
        for await (const part of stream) parts.push(part as Buffer);
        return Buffer.concat(parts);
      } catch (err) {
        return storeFailure(err);
      }
    },
    async remove(key) {
      await client.removeObject(cfg.bucket, key).catch(storeFailure);
    },
    presignUpload(key, ttlSeconds) {
      return signer.presignedPutObject(cfg.bucket, key, ttlSeconds);
    },
    presignDownload(key, ttlSeconds, file) {
      return signer.presignedGetObject(cfg.bucket, key, ttlSeconds, {
        "response-content-disposition": signableDisposition(file.filename),
        "response-content-type": file.contentType,
      });
    },
    async ping() {
      await client.bucketExists(cfg.bucket);
    },
  };
}

/**
 * Headers that make a browser treat a stored object as inert data: no scripts, plugins, forms or
 * subresources (CSP sandbox) and no type sniffing. Sent with every object the services serve.
 */
export const INERT_CONTENT_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; sandbox",
  "X-Content-Type-Options": "nosniff",
} as const;

/**
 * A file name safe inside a header: the last path segment, without control characters, quotes,
 * backslashes or separators that break `filename="..."`, at most 200 characters; "download"
 * when nothing is left.
 */
export function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const kept = [...base].filter((ch) => {
    const code = ch.codePointAt(0) ?? 0;
    // C0/C1 controls, and bidi controls that can disguise an extension (e.g. "fdp.exe" shown reversed).
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return false;
    if ((code >= 0x200e && code <= 0x200f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))
      return false;
    // Lone surrogates cannot be percent-encoded for filename*.
    if (code >= 0xd800 && code <= 0xdfff) return false;
    return !'"\\;'.includes(ch);
  });
  // Sliced by code point, so no surrogate pair is cut in half.
  const clean = kept.slice(0, 200).join("").trim();
  return clean.replace(/^\.+/, "").trim() || "download";
}

/**
 * `Content-Disposition` of `disposition` with a sanitized name (safeFilename): an ASCII
 * fallback in `filename` and the UTF-8 name in `filename*` (RFC 6266 / RFC 5987).
 */
export function contentDisposition(disposition: "attachment" | "inline", filename: string): string {
  const name = safeFilename(filename);
  const ascii = name.replace(/[^\x20-\x7e]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * `attachment; filename="..."` for a signed response-content-disposition: ASCII only, without
 * `!'()*` (so no RFC 5987 `filename*`). s3rver canonicalizes query values with
 * encodeURIComponent where SigV4 clients (minio) escape those characters too, so a link whose
 * override holds one of them would fail its own signature check.
 */
function signableDisposition(filename: string): string {
  return `attachment; filename="${safeFilename(filename).replace(/[^\x20-\x7e]|[!'()*]/g, "_")}"`;
}

/** Raster image types a browser only ever decodes (never runs): the media served inline. */
const PASSIVE_IMAGE_EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/bmp": "bmp",
};

/**
 * How to serve a stored image (`GET /v1/media/{id}`), always with INERT_CONTENT_HEADERS: passive
 * raster types (PNG, JPEG, GIF, WebP, AVIF, BMP) inline; other image types browsers do not draw
 * (EMF, WMF, TIFF from Office files) under their type as an attachment; SVG (it can carry
 * scripts) and anything that is not a plain image type as an `application/octet-stream` attachment.
 */
export function mediaResponseHeaders(id: string, contentType: string): Record<string, string> {
  const type = contentType.split(";")[0].trim().toLowerCase();
  const ext = PASSIVE_IMAGE_EXTENSIONS[type];
  const otherImage = /^image\/[a-z0-9.+-]+$/.test(type) && !/svg|xml/.test(type);
  return {
    ...INERT_CONTENT_HEADERS,
    "Content-Type": ext || otherImage ? type : "application/octet-stream",
    "Content-Disposition": contentDisposition(ext ? "inline" : "attachment", `${id}.${ext ?? "bin"}`),
  };
}
