// Decoded text with the way back to the original bytes: what lets the markdown and text
// converters give byte ranges for blocks they find in normalized text.
import iconv from "iconv-lite";
import { decodeText } from "../text/encoding.js";

/** Encodings whose byte offsets are computed here; other decodings get no source map. */
const OFFSET_ENCODINGS = new Set(["utf-8", "utf-16le", "utf-16be", "windows-1252"]);

/** Normalized text of a file and, when it maps back exactly, a byte offset for each position. */
export interface MappedText {
  /** Control characters removed, CRLF and CR turned into LF (what the converters parse). */
  text: string;
  /** The decoding used (decodeText). */
  encoding: string;
  /** Control characters removed. */
  dropped: number;
  /** The text before normalization (for the converter's checks). */
  decoded: string;
  /**
   * Byte offset in the original file of normalized position `i` (0..text.length); for an end
   * position, the byte just after the preceding character. Null when the decoding does not
   * round-trip to the same bytes (invalid sequences): such a file gets no source map.
   */
  byteAt: ((i: number) => number) | null;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

const BOMS: Record<string, number[]> = {
  "utf-8": [0xef, 0xbb, 0xbf],
  "utf-16le": [0xff, 0xfe],
  "utf-16be": [0xfe, 0xff],
};

function bomLength(bytes: Uint8Array, encoding: string): number {
  const bom = BOMS[encoding];
  return bom?.every((b, i) => bytes[i] === b) ? bom.length : 0;
}

/** Bytes the code unit at `i` takes in `encoding` (a surrogate pair counts 4 on its high half in UTF-8). */
function unitBytes(text: string, i: number, encoding: string): number {
  if (encoding === "windows-1252") return 1;
  if (encoding !== "utf-8") return 2;
  const c = text.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) return 4;
  if (c >= 0xdc00 && c <= 0xdfff) return 0;
  return 3;
}

/**
 * Decodes `bytes` as decodeText does and normalizes like the converters (control characters
 * dropped, line endings to LF), keeping, when the decoding round-trips, each normalized
 * position's byte offset in the original.
 */
export function decodeMapped(bytes: Uint8Array, withOffsets: boolean): MappedText {
  const { text: decoded, encoding } = decodeText(bytes);
  const out: string[] = [];
  const from: number[] = [];
  let dropped = 0;
  for (let i = 0; i < decoded.length; i++) {
    const ch = decoded[i];
    if (CONTROL.test(ch)) {
      dropped++;
      continue;
    }
    if (ch === "\r") {
      if (decoded[i + 1] === "\n") continue;
      out.push("\n");
    } else out.push(ch);
    from.push(i);
  }
  const text = out.join("");
  let byteAt: MappedText["byteAt"] = null;
  if (withOffsets && OFFSET_ENCODINGS.has(encoding)) {
    const bom = bomLength(bytes, encoding);
    const body = Buffer.from(bytes.buffer, bytes.byteOffset + bom, bytes.byteLength - bom);
    if (iconv.encode(decoded, encoding).equals(body)) {
      const cum = new Float64Array(decoded.length + 1);
      cum[0] = bom;
      for (let i = 0; i < decoded.length; i++) cum[i + 1] = cum[i] + unitBytes(decoded, i, encoding);
      byteAt = (i) => (i <= 0 ? (from.length > 0 ? cum[from[0]] : bom) : cum[from[i - 1] + 1]);
    }
  }
  return { text, encoding, dropped, decoded, byteAt };
}
