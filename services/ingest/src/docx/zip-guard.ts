// Reads a zip's central directory and checks it before any library unzips it: mammoth (via
// JSZip) inflates every part in memory with no bound, so a 278 KB docx bomb can cost GBs.
// Only the central directory and local headers are parsed here; inflation is bounded by
// zlib's maxOutputLength so an entry that lies about its size is caught after at most its
// declared size.
import { inflateRawSync } from "node:zlib";
import { InputError } from "@redline/service-kit";

/** One entry of the central directory. Sizes in bytes. */
export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

/** A zip whose directory passed the checks; `read` inflates one entry within its declared size. */
export interface CheckedZip {
  entries: ZipEntry[];
  has(name: string): boolean;
  /** The entry's bytes, or null when absent. Throws InputError when the entry is damaged or lies. */
  read(name: string): Buffer | null;
  /** Inflates every entry once (bounded), proving the declared sizes before another reader trusts them. */
  verifyAll(): void;
}

/** Bounds applied to the directory. */
export interface ZipLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
  maxCompressionRatio: number;
}

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EOCD_SIG = 0x06064b50;
const CD_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const RATIO_CHECK_MIN_BYTES = 1024 * 1024;

const mb = (n: number) => `${Math.round((n / (1024 * 1024)) * 10) / 10} MB`;

/** Reads a little-endian u64 that must fit a JS number (zip64 fields). */
function u64(buf: Buffer, at: number): number {
  const v = buf.readBigUInt64LE(at);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
}

function findEocd(buf: Buffer): number {
  // The EOCD is 22 bytes plus a comment of at most 65535 bytes, at the very end.
  const stop = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= stop; i--) {
    if (buf.readUInt32LE(i) === EOCD_SIG) return i;
  }
  return -1;
}

/**
 * Parses and checks a zip container. `label` names the format in messages (".docx").
 * Throws InputError when the zip is truncated or malformed, has encrypted entries or an
 * unsupported compression method, or exceeds `limits` (entry count, total uncompressed size,
 * compression ratio of large entries).
 */
export function checkZip(buf: Buffer, limits: ZipLimits, label: string): CheckedZip {
  try {
    return parseZip(buf, limits, label);
  } catch (err) {
    // parseZip checks every offset it reads; this catches what a hostile layout might still slip past.
    if (err instanceof RangeError) throw damagedError(label, "malformed zip structure");
    throw err;
  }
}

function damagedError(label: string, why: string): InputError {
  return new InputError(
    `The ${label} file is damaged (${why}); open it in its application, save it again and upload the new file`,
  );
}

/** The refusals of one file, worded with its format's label. */
interface Refusals {
  damaged(why: string): InputError;
  bomb(why: string): InputError;
}

/** Entry count, size and offset of the central directory, from the (zip64) end record. */
function readDirectoryEnd(buf: Buffer, no: Refusals): { total: number; cdSize: number; cdOffset: number } {
  if (buf.length < 22) throw no.damaged("too short to be a zip file");
  const eocd = findEocd(buf);
  if (eocd < 0) throw no.damaged("truncated zip: no central directory");
  const total = buf.readUInt16LE(eocd + 10);
  const cdSize = buf.readUInt32LE(eocd + 12);
  const cdOffset = buf.readUInt32LE(eocd + 16);
  if (total !== 0xffff && cdSize !== 0xffffffff && cdOffset !== 0xffffffff) return { total, cdSize, cdOffset };
  const loc = eocd - 20;
  if (loc < 0 || buf.readUInt32LE(loc) !== ZIP64_LOCATOR_SIG) throw no.damaged("zip64 locator missing");
  const z64 = u64(buf, loc + 8);
  if (z64 + 56 > buf.length || buf.readUInt32LE(z64) !== ZIP64_EOCD_SIG) throw no.damaged("zip64 directory missing");
  return { total: u64(buf, z64 + 32), cdSize: u64(buf, z64 + 40), cdOffset: u64(buf, z64 + 48) };
}

/** Applies the zip64 extra field in [e, extraEnd): 64-bit values only for 32-bit fields set to 0xFFFFFFFF. */
function applyZip64Extra(buf: Buffer, e: number, extraEnd: number, entry: ZipEntry): void {
  while (e + 4 <= extraEnd) {
    const id = buf.readUInt16LE(e);
    const size = buf.readUInt16LE(e + 2);
    if (id === 0x0001) {
      let q = e + 4;
      const fieldEnd = Math.min(e + 4 + size, extraEnd);
      if (entry.uncompressedSize === 0xffffffff && q + 8 <= fieldEnd) {
        entry.uncompressedSize = u64(buf, q);
        q += 8;
      }
      if (entry.compressedSize === 0xffffffff && q + 8 <= fieldEnd) {
        entry.compressedSize = u64(buf, q);
        q += 8;
      }
      if (entry.localHeaderOffset === 0xffffffff && q + 8 <= fieldEnd) entry.localHeaderOffset = u64(buf, q);
    }
    e += 4 + size;
  }
}

/** The central directory entry at `p` and where the next one starts. */
function readCentralEntry(buf: Buffer, p: number, no: Refusals): { entry: ZipEntry; next: number } {
  if (p + 46 > buf.length || buf.readUInt32LE(p) !== CD_SIG) throw no.damaged("central directory entry is corrupt");
  const nameLen = buf.readUInt16LE(p + 28);
  const extraLen = buf.readUInt16LE(p + 30);
  const commentLen = buf.readUInt16LE(p + 32);
  const entry: ZipEntry = {
    name: buf.toString("utf8", p + 46, p + 46 + nameLen),
    method: buf.readUInt16LE(p + 10),
    flags: buf.readUInt16LE(p + 8),
    compressedSize: buf.readUInt32LE(p + 20),
    uncompressedSize: buf.readUInt32LE(p + 24),
    localHeaderOffset: buf.readUInt32LE(p + 42),
  };
  const extraEnd = p + 46 + nameLen + extraLen;
  if (extraEnd + commentLen > buf.length) throw no.damaged("central directory entry runs past the end of the file");
  applyZip64Extra(buf, p + 46 + nameLen, extraEnd, entry);
  return { entry, next: extraEnd + commentLen };
}

/**
 * Refuses, in this order, an encrypted entry, an unknown method, a directory whose entries up to
 * this one (`sum` bytes uncompressed) expand past the cap, or a large entry compressed past the ratio.
 */
function checkEntry(entry: ZipEntry, sum: number, limits: ZipLimits, label: string, no: Refusals): void {
  const { name, method, compressedSize, uncompressedSize } = entry;
  if (entry.flags & 0x1) {
    throw new InputError(`The ${label} file is encrypted/password-protected; remove the password and upload again`);
  }
  if (method !== 0 && method !== 8) throw no.damaged(`entry ${name} uses unsupported compression method ${method}`);
  if (sum > limits.maxUncompressedBytes)
    throw no.bomb(`it expands to more than ${mb(limits.maxUncompressedBytes)} when unzipped`);
  const ratio = uncompressedSize / Math.max(compressedSize, 1);
  if (uncompressedSize > RATIO_CHECK_MIN_BYTES && ratio > limits.maxCompressionRatio)
    throw no.bomb(`entry ${name} compresses ${Math.round(ratio)}:1 (${mb(uncompressedSize)})`);
}

/** The entry's bytes, inflated within its declared size. */
function readEntry(buf: Buffer, entry: ZipEntry, no: Refusals): Buffer {
  const at = entry.localHeaderOffset;
  if (at + 30 > buf.length || buf.readUInt32LE(at) !== LOCAL_SIG)
    throw no.damaged(`local header of ${entry.name} is missing`);
  const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  if (end > buf.length) throw no.damaged(`entry ${entry.name} is cut short`);
  const data = buf.subarray(start, end);
  if (entry.method === 0) return data;
  try {
    // maxOutputLength stops inflation as soon as the entry outgrows what it declared.
    return inflateRawSync(data, { maxOutputLength: Math.max(entry.uncompressedSize, 1) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw no.bomb(`entry ${entry.name} expands beyond the ${entry.uncompressedSize} bytes it declares`);
    }
    throw no.damaged(`entry ${entry.name} cannot be decompressed`);
  }
}

function parseZip(buf: Buffer, limits: ZipLimits, label: string): CheckedZip {
  const no: Refusals = {
    damaged: (why) => damagedError(label, why),
    bomb: (why) =>
      new InputError(
        `The ${label} file was refused as a possible zip bomb: ${why}. Remove embedded files or split the document and upload again`,
      ),
  };
  const { total, cdSize, cdOffset } = readDirectoryEnd(buf, no);
  // Checked before walking the directory so a 10-million-entry directory costs nothing.
  if (total > limits.maxEntries) throw no.bomb(`${total} entries, more than the ${limits.maxEntries} allowed`);
  if (cdOffset + cdSize > buf.length) throw no.damaged("central directory points past the end of the file");

  const entries: ZipEntry[] = [];
  let sum = 0;
  let p = cdOffset;
  for (let i = 0; i < total; i++) {
    const { entry, next } = readCentralEntry(buf, p, no);
    p = next;
    sum += entry.uncompressedSize;
    checkEntry(entry, sum, limits, label, no);
    entries.push(entry);
  }

  const byName = new Map(entries.map((en) => [en.name, en]));
  return {
    entries,
    has: (name) => byName.has(name),
    read(name) {
      const entry = byName.get(name);
      return entry ? readEntry(buf, entry, no) : null;
    },
    verifyAll() {
      for (const entry of entries) readEntry(buf, entry, no);
    },
  };
}
