// External relationships of a package written back in place (docx-in-place.ts) that would make
// Word reach out on the member's behalf: an attached template, a linked picture, OLE object,
// sub-document or frame is fetched when the file opens (file: and UNC paths leak the member's
// NTLM credentials; http lets the sender see who opened it), and a hyperlink is followed on a
// click. Kept: hyperlinks to http, https, mailto and the document's own anchors, and https for
// the rest, except attached templates, which go whatever their address. A dropped
// relationship's references leave its part too (no dangling ids, so Word still opens the file):
// an element that cannot be without it goes, elsewhere the attribute naming it goes (a
// hyperlink keeps its text, a linked picture its embedded copy). Nothing else is rewritten.
import type JSZip from "jszip";
import { decodeXml } from "../docx/xml.js";
import { partOfRels } from "./docx-package.js";
import { attr, isAddress } from "./docx-package-names.js";

const REL_NAMESPACES = [
  "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
  "http://purl.oclc.org/ooxml/officeDocument/relationships",
];

// Elements whose relationship id is required (CT_Rel and kin in wml.xsd): they go with it.
const NEEDS_ID = [
  "attachedTemplate",
  "subDoc",
  "sourceFileName",
  "objectLink",
  "objectEmbed",
  "dataSource",
  "headerSource",
  "headerReference",
  "footerReference",
  "printerSettings",
  "altChunk",
  "embedRegular",
  "embedBold",
  "embedItalic",
  "embedBoldItalic",
];

/** How a dropped relationship is named to the member, and why it went. */
interface DropKind {
  one: string;
  many: string;
  why: string;
}

const HYPERLINK: DropKind = {
  one: "link to a local file, network share or unsafe address",
  many: "links to local files, network shares or unsafe addresses",
  why: "the linked text stays, without the link",
};
const FETCHED: Record<string, DropKind> = {
  attachedTemplate: fetched("attached template", "Word would fetch it when the file opens"),
  image: fetched("linked picture", "Word would fetch it when the file opens; an embedded copy stays"),
  oleObject: fetched("linked object", "Word would fetch it when the file opens"),
  subDocument: fetched("linked sub-document", "Word would fetch it when the file opens"),
  frame: fetched("linked frame", "Word would fetch it when the file opens"),
};
const OTHER = fetched("external reference", "Word could fetch it when the file opens");

function fetched(one: string, why: string): DropKind {
  return { one, many: `${one}s`, why };
}

/** What an address is, in general terms: its scheme and host, or that it is a network or relative path (bounded). */
export function describeAddress(target: string): string {
  const t = plainAddress(target);
  const host = (rest: string) => (/^[\w.-]+/.exec(rest)?.[0] ?? "").slice(0, 40);
  if (/^[/\\]{2}/.test(t)) return `\\\\${host(t.slice(2))}`;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(t)?.[1];
  if (!scheme) return "a relative path";
  const after = t.slice(scheme.length + 1);
  const h = /^[/\\]{2}/.test(after) ? host(after.slice(2)) : "";
  return `${scheme.slice(0, 20).toLowerCase()}:${h ? `//${h}` : ""}`;
}

/** A target as a URL parser reads it: entities decoded, leading blanks and controls and inner tabs/newlines gone. */
function plainAddress(target: string): string {
  return (
    decodeXml(target)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are what a URL parser strips.
      .replace(/^[\u0000-\u0020]+/, "")
      .replace(/[\t\r\n]/g, "")
  );
}

/**
 * Why the relationship of `type` (its full URI) to `target` (as written, XML-escaped) must go,
 * or null when it stays. A relationship counts as external when marked so or when its target is
 * an address (a part name never has a scheme).
 */
export function unsafeRelationship(type: string, target: string, external: boolean): DropKind | null {
  if (!external && !isAddress(decodeXml(target))) return null;
  const t = plainAddress(target);
  const relType = type.slice(type.lastIndexOf("/") + 1);
  if (relType === "hyperlink") return /^(?:https?:\/\/[^/\\\s]|mailto:|#)/i.test(t) ? null : HYPERLINK;
  if (relType === "attachedTemplate") return FETCHED.attachedTemplate;
  if (/^https:\/\/[^/\\\s]/i.test(t)) return null;
  return Object.hasOwn(FETCHED, relType) ? FETCHED[relType] : OTHER;
}

/** The prefixes `xml` binds to the relationships namespace (Transitional or Strict). */
function relPrefixes(xml: string): string[] {
  const out = new Set<string>();
  for (const m of xml.matchAll(/\sxmlns:([\w.-]+)\s*=\s*["']([^"']*)["']/g))
    if (REL_NAMESPACES.includes(m[2])) out.add(m[1]);
  return [...out];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `xml` (the part the relationships belong to) without any reference to the relationships `ids`. */
export function withoutReferences(xml: string, ids: Set<string>): string {
  if (ids.size === 0) return xml;
  const prefixes = relPrefixes(xml);
  let out = xml;
  for (const id of ids) {
    // Ids are compared as written in the rels part and in this one (both XML attributes).
    const value = `(?:"${escapeRe(id)}"|'${escapeRe(id)}')`;
    for (const p of prefixes) {
      const ref = `\\s${escapeRe(p)}:id\\s*=\\s*${value}`;
      const element = new RegExp(
        `<((?:[\\w.-]+:)?(?:${NEEDS_ID.join("|")}))\\b[^>]*?${ref}[^>]*?(?:/>|>[\\s\\S]*?</\\1\\s*>)`,
        "g",
      );
      out = out.replace(element, "");
      out = out.replace(new RegExp(`\\s${escapeRe(p)}:[\\w.-]+\\s*=\\s*${value}`, "g"), "");
    }
    // VML names a relationship in o:relid as well.
    out = out.replace(new RegExp(`\\s(?:[\\w.-]+:)?relid\\s*=\\s*${value}`, "g"), "");
  }
  return out;
}

/**
 * Drops the unsafe relationships of every relationships part of `zip` (see the file comment)
 * and their references; only the parts that had one are rewritten. Returns whether any was
 * dropped and one warning per kind of drop: how many, their addresses in general terms (scheme
 * and host, never the full target) and why.
 */
export async function dropUnsafeRelationships(zip: JSZip): Promise<{ changed: boolean; warnings: string[] }> {
  const drops = new Map<DropKind, { count: number; addresses: Set<string> }>();
  for (const [name, file] of Object.entries(zip.files)) {
    const part = file.dir ? null : partOfRels(name);
    if (part === null) continue;
    const xml = await file.async("string");
    const ids = new Set<string>();
    const rels = xml.replace(/<Relationship\b[^>]*>(?:\s*<\/Relationship\s*>)?/g, (tag) => {
      const id = attr(tag, "Id");
      const target = attr(tag, "Target");
      if (id === undefined || target === undefined) return tag;
      const external = /\sTargetMode\s*=\s*["']External["']/.test(tag);
      const kind = unsafeRelationship(attr(tag, "Type") ?? "", target, external);
      if (!kind) return tag;
      ids.add(id);
      const seen = drops.get(kind) ?? { count: 0, addresses: new Set<string>() };
      seen.count++;
      if (seen.addresses.size < 3) seen.addresses.add(describeAddress(target));
      drops.set(kind, seen);
      return "";
    });
    if (ids.size === 0) continue;
    zip.file(name, rels);
    const source = part === "" ? undefined : zip.file(part);
    if (!source) continue;
    const before = await source.async("string");
    const after = withoutReferences(before, ids);
    if (after !== before) zip.file(part, after);
  }
  const warnings = [...drops].map(([kind, { count, addresses }]) => {
    const what = count === 1 ? `1 ${kind.one}` : `${count} ${kind.many}`;
    return `Removed ${what} (${[...addresses].join(", ")}) from the Word file: ${kind.why}`;
  });
  return { changed: drops.size > 0, warnings };
}
