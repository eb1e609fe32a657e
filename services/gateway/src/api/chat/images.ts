// Chat image attachments checked before they reach the model (issue 36, request fields): the
// type is read from the bytes, never trusted from `mimeType`, and the size is capped, so a
// non-image or an oversized item is the client's 422 naming it, not a provider error that comes
// back as a 503 "retry".
import { normalizeBase64 } from "../shared/schemas.js";

/** Largest image, decoded, in bytes (OpenAI's per-image limit). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** The image types a vision model takes, by MIME type. */
export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** Declared types that name one of ImageType (`image/jpg` is a common spelling of JPEG). */
const DECLARED: Record<string, ImageType> = {
  "image/png": "image/png",
  "image/jpeg": "image/jpeg",
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/gif": "image/gif",
  "image/webp": "image/webp",
};

/**
 * The ImageType a declared `mimeType` names (parameters and case ignored, `image/jpg` is JPEG),
 * or undefined; for a validated attachment it is also the type of its bytes.
 */
export function declaredImageType(mimeType: string): ImageType | undefined {
  return DECLARED[mimeType.split(";")[0].trim().toLowerCase()];
}

/** The image type of `head` (the first 12 bytes or more) by its magic bytes; undefined for anything else. */
export function sniffImageType(head: Uint8Array): ImageType | undefined {
  const at = (offset: number, ascii: string) => [...ascii].every((ch, i) => head[offset + i] === ch.charCodeAt(0));
  if (head[0] === 0x89 && at(1, "PNG\r\n\x1a\n")) return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (at(0, "GIF87a") || at(0, "GIF89a")) return "image/gif";
  if (at(0, "RIFF") && at(8, "WEBP")) return "image/webp";
  return undefined;
}

/** Decoded length of a normalized base64 string (standard or URL-safe, padded or not), in bytes. */
function decodedLength(b64: string): number {
  const unpadded = b64.replace(/=+$/, "");
  return Math.floor((unpadded.length * 3) / 4);
}

/**
 * Why an image attachment cannot go to the model, or undefined when it can: not PNG, JPEG, GIF
 * or WebP by its bytes, larger than MAX_IMAGE_BYTES decoded, or a `mimeType` that names another
 * type than its bytes. `base64Data` must already be valid base64 (a data: prefix is allowed).
 */
export function imageProblem(img: { base64Data: string; mimeType: string }): string | undefined {
  const data = normalizeBase64(img.base64Data, true);
  const size = decodedLength(data);
  if (size > MAX_IMAGE_BYTES) {
    return `Image is ${size} bytes; at most ${MAX_IMAGE_BYTES} bytes (20 MiB) are accepted`;
  }
  // 16 base64 characters are the first 12 bytes, enough for every signature above.
  const actual = sniffImageType(Buffer.from(data.slice(0, 16), "base64"));
  if (!actual) return "Image data is not a PNG, JPEG, GIF or WebP image (its bytes match none of them)";
  if (declaredImageType(img.mimeType) !== actual) {
    return `mimeType '${img.mimeType}' does not match the image data, which is ${actual}`;
  }
  return undefined;
}
