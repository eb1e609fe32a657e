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

function parseZip(buf: Buffer, limits: ZipLimits, label: string): CheckedZip {
  const damaged = (why: string) => damagedError(label, why);
  const bomb = (why: string) =>
    new InputError(
      `The ${label} file was refused as a possible zip bomb: ${why}. Remove embedded files or split the document and upload again`,
    );

  if (buf.length < 22) throw damaged("too short to be a zip file");
  const eocd = findEocd(buf);
  if (eocd < 0) throw damaged("truncated zip: no central directory");

  let total = buf.readUInt16LE(eocd + 10);
  let cdSize = buf.readUInt32LE(eocd + 12);
  let cdOffset = buf.readUInt32LE(eocd + 16);
  if (total === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const loc = eocd - 20;
    if (loc < 0 || buf.readUInt32LE(loc) !== ZIP64_LOCATOR_SIG) throw damaged("zip64 locator missing");
    const z64 = u64(buf, loc + 8);
    if (z64 + 56 > buf.length || buf.readUInt32LE(z64) !== ZIP64_EOCD_SIG) throw damaged("zip64 directory missing");
    total = u64(buf, z64 + 32);
    cdSize = u64(buf, z64 + 40);
    cdOffset = u64(buf, z64 + 48);
  }
  // Checked before walking the directory so a 10-million-entry directory costs nothing.
  if (total > limits.maxEntries) throw bomb(`${total} entries, more than the ${limits.maxEntries} allowed`);
  if (cdOffset + cdSize > buf.length) throw damaged("central directory points past the end of the file");

  const entries: ZipEntry[] = [];
  let sum = 0;
  let p = cdOffset;
  for (let i = 0; i < total; i++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CD_SIG) throw damaged("central directory entry is corrupt");
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    let compressedSize = buf.readUInt32LE(p + 20);
    let uncompressedSize = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    let localHeaderOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString("utf8", p + 46, p + 46 + nameLen);
    // Zip64 extra field: the 64-bit values appear only for the 32-bit fields set to 0xFFFFFFFF.
    let e = p + 46 + nameLen;
    const extraEnd = e + extraLen;
    if (extraEnd + commentLen > buf.length) throw damaged("central directory entry runs past the end of the file");
    while (e + 4 <= extraEnd) {
      const id = buf.readUInt16LE(e);
      const size = buf.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        const fieldEnd = Math.min(e + 4 + size, extraEnd);
        if (uncompressedSize === 0xffffffff && q + 8 <= fieldEnd) {
          uncompressedSize = u64(buf, q);
          q += 8;
        }
        if (compressedSize === 0xffffffff && q + 8 <= fieldEnd) {
          compressedSize = u64(buf, q);
          q += 8;
        }
        if (localHeaderOffset === 0xffffffff && q + 8 <= fieldEnd) localHeaderOffset = u64(buf, q);
      }
      e += 4 + size;
    }
    p = extraEnd + commentLen;

    if (flags & 0x1) {
      throw new InputError(`The ${label} file is encrypted/password-protected; remove the password and upload again`);
    }
    if (method !== 0 && method !== 8) throw damaged(`entry ${name} uses unsupported compression method ${method}`);
    sum += uncompressedSize;
    if (sum > limits.maxUncompressedBytes) {
      throw bomb(`it expands to more than ${mb(limits.maxUncompressedBytes)} when unzipped`);
    }
    if (
      uncompressedSize > RATIO_CHECK_MIN_BYTES &&
      uncompressedSize / Math.max(compressedSize, 1) > limits.maxCompressionRatio
    ) {
      throw bomb(
        `entry ${name} compresses ${Math.round(uncompressedSize / Math.max(compressedSize, 1))}:1 (${mb(uncompressedSize)})`,
      );
    }
    entries.push({ name, method, flags, compressedSize, uncompressedSize, localHeaderOffset });
  }

  const byName = new Map(entries.map((en) => [en.name, en]));
  const read = (entry: ZipEntry): Buffer => {
    const at = entry.localHeaderOffset;
    if (at + 30 > buf.length || buf.readUInt32LE(at) !== LOCAL_SIG)
      throw damaged(`local header of ${entry.name} is missing`);
    const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
    const end = start + entry.compressedSize;
    if (end > buf.length) throw damaged(`entry ${entry.name} is cut short`);
    const data = buf.subarray(start, end);
    if (entry.method === 0) return data;
    try {
      // maxOutputLength stops inflation as soon as the entry outgrows what it declared.
      return inflateRawSync(data, { maxOutputLength: Math.max(entry.uncompressedSize, 1) });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
        throw bomb(`entry ${entry.name} expands beyond the ${entry.uncompressedSize} bytes it declares`);
      }
      throw damaged(`entry ${entry.name} cannot be decompressed`);
    }
  };

  return {
    entries,
    has: (name) => byName.has(name),
    read(name) {
      const entry = byName.get(name);
      return entry ? read(entry) : null;
    },
    verifyAll() {
      for (const entry of entries) read(entry);
    },
  };
}
