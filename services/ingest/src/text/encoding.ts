// Bytes → string for the text-like formats (txt, md, html, rtf code pages).
// iconv-lite, not TextDecoder: Node 20's TextDecoder("windows-1252") decodes as ISO-8859-1,
// which turns 0x93/0x94 into C1 control characters instead of curly quotes.
import iconv from "iconv-lite";

/** A decoded text and the encoding that was used. */
export interface DecodedText {
  text: string;
  encoding: string;
}

const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True when the bytes are well-formed UTF-8. */
export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    UTF8_STRICT.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The encoding named by a byte-order mark, with the BOM length. */
function bomEncoding(bytes: Uint8Array): { encoding: string; length: number } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: "utf-8", length: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: "utf-16le", length: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: "utf-16be", length: 2 };
  return null;
}

/**
 * BOM-less UTF-16 shows as a NUL in every other byte for Latin text; checked on the first
 * 4 KB so a binary file with a few NULs is not mistaken for it.
 */
function sniffUtf16(bytes: Uint8Array): "utf-16le" | "utf-16be" | null {
  const n = Math.min(bytes.length, 4096) & ~1;
  if (n < 4) return null;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenZeros++;
    if (bytes[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return "utf-16le";
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return "utf-16be";
  return null;
}

/** True when iconv-lite can decode the named charset. */
export function charsetSupported(charset: string): boolean {
  return iconv.encodingExists(charset);
}

/** Decodes bytes with a named charset (any label iconv-lite knows, e.g. "windows-1251", "shift_jis"). */
export function decodeWith(bytes: Uint8Array, charset: string): string {
  return iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), charset);
}

/**
 * Decodes text of unknown encoding: a BOM wins (UTF-8, UTF-16LE/BE), then BOM-less UTF-16,
 * then UTF-8 when the bytes are valid UTF-8, else `fallback` (Windows-1252 by default, the
 * usual encoding of legacy Western text files). A `declared` charset (from an HTML meta) is
 * used when there is no BOM, it is known, and the bytes are not evidently UTF-8.
 */
export function decodeText(bytes: Uint8Array, opts: { declared?: string; fallback?: string } = {}): DecodedText {
  const bom = bomEncoding(bytes);
  if (bom) return { text: decodeWith(bytes.subarray(bom.length), bom.encoding), encoding: bom.encoding };
  const declared = normaliseCharset(opts.declared);
  if (declared && declared !== "utf-8" && charsetSupported(declared)) {
    // Pages often declare a legacy charset but are really UTF-8; bytes that are valid UTF-8
    // and contain non-ASCII are almost never legacy text, so they win over the label.
    if (isAscii(bytes) || !isValidUtf8(bytes)) return { text: decodeWith(bytes, declared), encoding: declared };
    return { text: decodeWith(bytes, "utf-8"), encoding: "utf-8" };
  }
  const utf16 = sniffUtf16(bytes);
  if (utf16) return { text: decodeWith(bytes, utf16), encoding: utf16 };
  if (isValidUtf8(bytes)) return { text: decodeWith(bytes, "utf-8"), encoding: "utf-8" };
  const fallback = opts.fallback ?? "windows-1252";
  return { text: decodeWith(bytes, fallback), encoding: fallback };
}

/** Lower-cases a charset label; Latin-1 and ASCII labels mean Windows-1252, as in browsers. */
function normaliseCharset(label: string | undefined): string | undefined {
  const l = label
    ?.trim()
    .toLowerCase()
    .replace(/^["']|["']$/g, "");
  if (!l) return undefined;
  if (l === "utf8") return "utf-8";
  // A meta tag readable as ASCII cannot be UTF-16; browsers treat that label as UTF-8 too.
  if (l.startsWith("utf-16") || l === "unicode") return "utf-8";
  if (["iso-8859-1", "iso8859-1", "latin1", "l1", "us-ascii", "ascii", "cp1252"].includes(l)) return "windows-1252";
  return l;
}

function isAscii(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return false;
  return true;
}
