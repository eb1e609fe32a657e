// The entry names of an uploaded package, made safe before it is written back in place
// (docx-in-place.ts): a zip entry named `/etc/x`, `..\..\x` or `word\document.xml` is a
// zip-slip for whoever unzips the export, and two entries that name the same part after
// normalization are read differently by different tools. Every name is normalized, a later
// entry that collides with an earlier one is left out, and the [Content_Types].xml overrides and
// internal relationship targets that spell a part the same unsafe ways are rewritten to match.
// A package with nothing to normalize is loaded as it is, so its parts stay byte-identical.
import { inflateRawSync } from "node:zlib";
import JSZip from "jszip";
import { decodeXml, escapeXml } from "../docx/xml.js";
import { checkZip, type ZipEntry } from "../docx/zip-guard.js";
import { partOfRels } from "./docx-package.js";

/** A package ready for the in-place writer, and what was done to its names. */
export interface LoadedPackage {
  zip: JSZip;
  /** True when an entry was renamed or dropped, or a reference to one rewritten: the package must be re-zipped. */
  changed: boolean;
  /** What the member should be told (X-Export-Warnings), in general terms. */
  warnings: string[];
}

// The upload already passed the configured zip limits (converters/docx.ts); the export only reads
// the directory again, so it does not refuse what the upload accepted.
const NO_LIMITS = {
  maxEntries: Number.MAX_SAFE_INTEGER,
  maxUncompressedBytes: Number.MAX_SAFE_INTEGER,
  maxCompressionRatio: Number.MAX_SAFE_INTEGER,
};
const LOCAL_SIG = 0x04034b50;

/**
 * `name` as a safe relative zip entry name: backslashes become `/`, a drive letter, leading
 * slashes, empty and `.` segments go, and `..` removes the segment before it (never climbing
 * above the root). "" when nothing is left.
 */
export function normalizeEntryName(name: string): string {
  const out: string[] = [];
  for (const segment of name
    .replace(/\\/g, "/")
    .replace(/^[A-Za-z]:(?=\/|$)/, "")
    .split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return out.join("/");
}

/** Part names are compared case-insensitively (OPC): two entries differing only in case collide. */
const partKey = (name: string) => name.toLowerCase();

/** The bytes of one directory entry (checkZip has proved its method and sizes). */
function entryBytes(bytes: Buffer, entry: ZipEntry): Buffer {
  const at = entry.localHeaderOffset;
  if (bytes.readUInt32LE(at) !== LOCAL_SIG) throw new Error("a zip entry has no local header");
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return Buffer.from(data);
  return inflateRawSync(data, { maxOutputLength: Math.max(entry.uncompressedSize, 1) });
}

/** An entry's normalized name; a folder's keeps its trailing slash ("" when nothing is left). */
function entryName(raw: string): string {
  const name = normalizeEntryName(raw);
  return name !== "" && /[/\\]$/.test(raw) ? `${name}/` : name;
}

/**
 * The entries to keep, each under its normalized name: the first of colliding entries wins,
 * except that one already under the normalized name beats the ones renamed to it (the importer
 * reads the main part by its exact name, docx/zip-guard.ts). `renamed`
 * counts entries whose name changed or had nothing left; `dropped` the collisions left out.
 */
function plan(entries: ZipEntry[]): { keep: { entry: ZipEntry; name: string }[]; renamed: number; dropped: number } {
  const winner = new Map<string, ZipEntry>();
  for (const entry of entries) {
    const name = entryName(entry.name);
    if (name === "") continue;
    const held = winner.get(partKey(name));
    if (!held || (held.name !== entryName(held.name) && entry.name === name)) winner.set(partKey(name), entry);
  }
  const keep: { entry: ZipEntry; name: string }[] = [];
  let renamed = 0;
  let dropped = 0;
  for (const entry of entries) {
    const name = entryName(entry.name);
    if (name !== entry.name) renamed++;
    if (name === "") continue;
    if (winner.get(partKey(name)) === entry) keep.push({ entry, name });
    else dropped++;
  }
  return { keep, renamed, dropped };
}

/** An attribute of a start tag (either quote), as written (XML-escaped); undefined when absent. */
export function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)
    .exec(tag)
    ?.slice(1)
    .find((v) => v !== undefined);
}

/** `tag` with attribute `name` set to `value` (escaped here). */
function withAttr(tag: string, name: string, value: string): string {
  return tag.replace(new RegExp(`(\\s${name}\\s*=\\s*)(?:"[^"]*"|'[^']*')`), `$1"${escapeXml(value)}"`);
}

/**
 * [Content_Types].xml with every Override's PartName normalized (`/` + the normalized entry
 * name) and later overrides of an already named part removed; undefined when nothing changes.
 */
function normalizedContentTypes(xml: string): string | undefined {
  const seen = new Set<string>();
  let changed = false;
  const out = xml.replace(/<Override\b[^>]*>/g, (tag) => {
    const partName = attr(tag, "PartName");
    if (partName === undefined) return tag;
    const normal = `/${normalizeEntryName(decodeXml(partName))}`;
    if (seen.has(partKey(normal))) {
      changed = true;
      return "";
    }
    seen.add(partKey(normal));
    if (normal === decodeXml(partName)) return tag;
    changed = true;
    return withAttr(tag, "PartName", normal);
  });
  return changed ? out : undefined;
}

/** Whether a relationship target is an address (a scheme, a UNC or network path) rather than a part. */
export function isAddress(target: string): boolean {
  return /^\s*(?:[a-z][a-z0-9+.-]*:|[/\\]{2})/i.test(target);
}

/**
 * A relationships part with its internal targets that use backslashes or climb above the
 * package root rewritten as the absolute part name they resolve to; undefined when nothing
 * changes. `dir` is the folder of the part the relationships belong to ("" at the root).
 */
function normalizedTargets(xml: string, dir: string): string | undefined {
  let changed = false;
  const out = xml.replace(/<Relationship\b[^>]*>/g, (tag) => {
    const raw = attr(tag, "Target");
    if (raw === undefined || /\sTargetMode\s*=\s*["']External["']/.test(tag)) return tag;
    const target = decodeXml(raw);
    if (isAddress(target)) return tag;
    const slashed = target.replace(/\\/g, "/");
    const path = slashed.startsWith("/") ? slashed : dir + slashed;
    const depth = path.split("/").reduce((d, s) => (d < 0 ? d : s === ".." ? d - 1 : s && s !== "." ? d + 1 : d), 0);
    if (slashed === target && depth >= 0) return tag;
    changed = true;
    return withAttr(tag, "Target", `/${normalizeEntryName(path)}`);
  });
  return changed ? out : undefined;
}

/**
 * Loads `bytes` (an uploaded .docx) for writing back in place with safe entry names: see the
 * file comment. Throws when the zip cannot be read (the caller then generates the export).
 */
export async function loadPackage(bytes: Buffer): Promise<LoadedPackage> {
  const { keep, renamed, dropped } = plan(checkZip(bytes, NO_LIMITS, ".docx").entries);
  const warnings: string[] = [];
  let zip: JSZip;
  if (renamed === 0 && dropped === 0) zip = await JSZip.loadAsync(bytes);
  else {
    // JSZip itself resolves `..` on load and keeps the LAST of entries it resolves alike, so the
    // kept entries are read from the directory instead.
    zip = new JSZip();
    for (const { entry, name } of keep)
      if (name.endsWith("/")) zip.folder(name.slice(0, -1));
      else zip.file(name, entryBytes(bytes, entry), { binary: true, createFolders: false });
    const entries = (n: number) => (n === 1 ? "1 entry of the Word package" : `${n} entries of the Word package`);
    if (renamed > 0)
      warnings.push(
        `${entries(renamed)} had an unsafe name (an absolute path, backslashes or ".." segments) and ${renamed === 1 ? "was" : "were"} renamed or left out`,
      );
    if (dropped > 0)
      warnings.push(
        `${entries(dropped)} repeated the name of another entry and ${dropped === 1 ? "was" : "were"} left out`,
      );
  }
  let changed = renamed > 0 || dropped > 0;
  const types = await zip.file("[Content_Types].xml")?.async("string");
  const fixedTypes = types === undefined ? undefined : normalizedContentTypes(types);
  if (fixedTypes !== undefined) {
    zip.file("[Content_Types].xml", fixedTypes);
    changed = true;
  }
  for (const [name, file] of Object.entries(zip.files)) {
    const part = file.dir ? null : partOfRels(name);
    if (part === null) continue;
    const fixed = normalizedTargets(await file.async("string"), part.slice(0, part.lastIndexOf("/") + 1));
    if (fixed === undefined) continue;
    zip.file(name, fixed);
    changed = true;
  }
  return { zip, changed, warnings };
}
