// Thin layer over htmlparser2 / domhandler / dom-serializer: one parse and one
// serialize configuration for the whole package, so every function produces
// byte-compatible markup (a precondition for chunkHtml being a fixed point).
import render from "dom-serializer";
import { type AnyNode, type ChildNode, type Document, Element, isTag, isText, type ParentNode, Text } from "domhandler";
import { Parser, parseDocument } from "htmlparser2";
import { BLOCK_LEVEL_TAGS, tagSet } from "./tags.js";

export type { AnyNode, ChildNode, Document, ParentNode };
export { Element, isTag, isText, Text };

/** Parses HTML (fragment or full document) into a domhandler tree, HTML mode. */
export function parseHtml(html: string): Document {
  return parseDocument(html, { decodeEntities: true });
}

// utf8: only &, <, >, quotes (in attributes) and U+00A0 are escaped, so
// non-ASCII text is left readable instead of becoming numeric entities.
// emptyAttrs: print alt="" rather than a bare `alt`, like sanitize-html does.
const SERIALIZE_OPTIONS = { encodeEntities: "utf8", emptyAttrs: true } as const;

/** Serializes nodes back to HTML (outer HTML for elements). */
export function serialize(nodes: AnyNode | AnyNode[]): string {
  return render(nodes, SERIALIZE_OPTIONS);
}

// Void elements and elements whose end tag HTML lets authors omit; used by
// the balance check so valid HTML such as `<li>a<li>b` is not called malformed.
const VOID_TAGS: ReadonlySet<string> = tagSet("area base br col embed hr img input link meta param source track wbr");
const OPTIONAL_END_TAGS: ReadonlySet<string> = tagSet(
  "p li dt dd tr td th thead tbody tfoot caption colgroup option optgroup rb rt rtc rp html head body",
);

/**
 * Finds a tag-balance problem in raw HTML, or returns null when it is balanced.
 * Problems: an end tag with no open element, or an element (other than void and
 * optional-end-tag ones) closed implicitly because its end tag is missing or
 * misplaced, e.g. `<p><b>x</p>` or `<div>x`.
 */
export function findImbalance(html: string): string | null {
  let matchedCloses = 0;
  let problem: string | null = null;
  const parser: CountingParser = new CountingParser({
    // The parser invents a start tag for a stray </p> or </br>.
    onopentag(name, _attribs, isImplied) {
      if (isImplied && problem === null) problem = `</${name}> has no matching start tag`;
    },
    onclosetag(name, isImplied) {
      if (parser.inSelfClosingTag) return;
      if (!isImplied) matchedCloses++;
      else if (problem === null && !VOID_TAGS.has(name) && !OPTIONAL_END_TAGS.has(name)) {
        problem = `<${name}> is not closed properly`;
      }
    },
  });
  parser.end(html);
  if (problem !== null) return problem;
  if (parser.explicitCloses > matchedCloses) return "an end tag has no matching start tag";
  return null;
}

// Counts end tags as the tokenizer sees them; the handler only hears about the
// ones that matched an open element, so the difference reveals stray end tags.
// Also marks while a `<path/>`-style self-closing tag (honoured in SVG/MathML)
// is being closed: the parser reports that as an implied close although no end
// tag is missing.
class CountingParser extends Parser {
  explicitCloses = 0;
  inSelfClosingTag = false;

  override onclosetag(start: number, endIndex: number): void {
    this.explicitCloses++;
    super.onclosetag(start, endIndex);
  }

  override onselfclosingtag(endIndex: number): void {
    this.inSelfClosingTag = true;
    try {
      super.onselfclosingtag(endIndex);
    } finally {
      this.inSelfClosingTag = false;
    }
  }
}

/** Replaces `old` in its parent by `replacements`, fixing sibling/parent links. */
export function replaceNode(old: ChildNode, replacements: ChildNode[]): void {
  const parent = old.parent;
  if (!parent) return;
  const index = parent.children.indexOf(old);
  parent.children.splice(index, 1, ...replacements);
  for (const node of replacements) node.parent = parent;
  relinkChildren(parent);
}

/** Appends `child` to `parent`, fixing links. */
export function appendChild(parent: ParentNode, child: ChildNode): void {
  parent.children.push(child);
  child.parent = parent;
  relinkChildren(parent);
}

/** Inserts `nodes` right after `anchor`, in its parent, fixing links. */
export function insertAfterNode(anchor: ChildNode, nodes: ChildNode[]): void {
  const parent = anchor.parent;
  if (!parent) return;
  const index = parent.children.indexOf(anchor);
  parent.children.splice(index + 1, 0, ...nodes);
  for (const node of nodes) node.parent = parent;
  relinkChildren(parent);
}

/** Resets prev/next/parent links of `parent`'s children after the array changed. */
export function relinkChildren(parent: ParentNode): void {
  const kids = parent.children;
  for (let i = 0; i < kids.length; i++) {
    kids[i].prev = kids[i - 1] ?? null;
    kids[i].next = kids[i + 1] ?? null;
    kids[i].parent = parent;
  }
}

/** Element children of a node, in order. */
export function elementChildren(node: ParentNode): Element[] {
  return node.children.filter(isTag);
}

/** Removes data-chunk-id and data-part from every descendant of `el` (not from `el` itself). */
export function stripNestedChunkIds(el: Element): void {
  for (const child of el.children) {
    if (!isTag(child)) continue;
    if ("data-chunk-id" in child.attribs) delete child.attribs["data-chunk-id"];
    if ("data-part" in child.attribs) delete child.attribs["data-part"];
    stripNestedChunkIds(child);
  }
}

/** Folds runs of whitespace (including U+00A0) to one space and trims. */
export function foldWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

// Tags whose boundaries separate words in the rendered text (a table cell, a
// line break, a list item): a space is emitted there so "a<br>b" reads "a b".
const TEXT_BREAK_TAGS = new Set([...BLOCK_LEVEL_TAGS, "br"]);
const NON_TEXT_TAGS = new Set(["script", "style", "template", "head", "title", "noscript"]);

/**
 * Plain text of an HTML string, whitespace folded to single spaces and trimmed.
 * Block boundaries and <br> count as spaces; script/style content is ignored.
 * Streams through the tokenizer instead of building a tree, for speed.
 */
export function textOf(html: string): string {
  const parts: string[] = [];
  let skipDepth = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (NON_TEXT_TAGS.has(name)) skipDepth++;
        else if (TEXT_BREAK_TAGS.has(name)) parts.push(" ");
      },
      onclosetag(name) {
        if (NON_TEXT_TAGS.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (TEXT_BREAK_TAGS.has(name)) parts.push(" ");
      },
      ontext(text) {
        if (skipDepth === 0) parts.push(text);
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return foldWhitespace(parts.join(""));
}
