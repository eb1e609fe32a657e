// Issue #32, part 8: a ProseMirror client written against this interface parses every HTML
// Redline sends. The schema is prosemirror-schema-basic's (copied below: the package is not a
// dependency) with `data-chunk-id` on the block nodes a review client renders, as the official
// review demo's is. Each corpus file is converted by ingest (the upload pipeline: converter,
// sanitizer) and chunked as the documents service stores it (what document_sync and
// GET …?include_html=true carry); the whole document and every chunk alone (an updated_html)
// must parse, and every chunk whose element the schema knows must keep its id.
import { readdirSync, readFileSync } from "node:fs";
import { chunkHtml } from "@redline/html-chunks";
import { closeDefaultConverterPool, convertDocument, loadHtml } from "@redline/ingest";
import { DOMParser, type Node as PmNode, Schema } from "prosemirror-model";
import { afterAll, describe, expect, it } from "vitest";

// ProseMirror's DOMParser reads a DOM; Node has none and no DOM library is installed here, so
// the parsed HTML (htmlparser2's tree, as ingest's loadHtml builds it) is given the few DOM
// members the parser uses: node types and names, children and siblings, attributes, a
// selector test for its rules' simple selectors, inline style values, appendChild (list
// normalization moves nested lists) and createTextNode (for <br>).
type DomhandlerNode = {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  data?: string;
  children?: DomhandlerNode[];
};

class FakeNode {
  parentNode: FakeElement | null = null;
  nextSibling: FakeNode | null = null;
  previousSibling: FakeNode | null = null;
  constructor(
    readonly nodeType: number,
    readonly nodeName: string,
  ) {}
  get ownerDocument() {
    return FAKE_DOCUMENT;
  }
}

class FakeText extends FakeNode {
  constructor(readonly nodeValue: string) {
    super(3, "#text");
  }
  get textContent(): string {
    return this.nodeValue;
  }
}

class FakeStyle {
  private readonly values = new Map<string, string>();
  constructor(style: string) {
    for (const declaration of style.split(";")) {
      const colon = declaration.indexOf(":");
      if (colon > 0)
        this.values.set(declaration.slice(0, colon).trim().toLowerCase(), declaration.slice(colon + 1).trim());
    }
  }
  get length() {
    return this.values.size;
  }
  getPropertyValue(name: string): string {
    return this.values.get(name) ?? "";
  }
  get fontWeight() {
    return this.getPropertyValue("font-weight");
  }
  get whiteSpace() {
    return this.getPropertyValue("white-space");
  }
}

class FakeElement extends FakeNode {
  readonly childNodes: FakeNode[] = [];
  readonly tagName: string;
  readonly style: FakeStyle;
  constructor(
    readonly localName: string,
    private readonly attrs: Record<string, string>,
  ) {
    super(1, localName.toUpperCase());
    this.tagName = this.nodeName;
    this.style = new FakeStyle(attrs.style ?? "");
  }
  get firstChild(): FakeNode | null {
    return this.childNodes[0] ?? null;
  }
  get textContent(): string {
    return this.childNodes.map((c) => (c as FakeText | FakeElement).textContent).join("");
  }
  getAttribute(name: string): string | null {
    return this.attrs[name.toLowerCase()] ?? null;
  }
  hasAttribute(name: string): boolean {
    return name.toLowerCase() in this.attrs;
  }
  /** Selectors of the form `tag`, `tag[attr]`, `[attr]`, comma-separated. */
  matches(selector: string): boolean {
    return selector.split(",").some((one) => {
      const m = /^\s*([a-z0-9]*)((?:\[[a-z-]+\])*)\s*$/i.exec(one);
      if (!m) throw new Error(`test DOM: unsupported selector ${one}`);
      const attrs = [...m[2].matchAll(/\[([a-z-]+)\]/gi)].map((a) => a[1]);
      return (m[1] === "" || m[1].toLowerCase() === this.localName) && attrs.every((a) => this.hasAttribute(a));
    });
  }
  appendChild(child: FakeNode): FakeNode {
    const from = child.parentNode;
    if (from) {
      const at = from.childNodes.indexOf(child);
      from.childNodes.splice(at, 1);
      if (child.previousSibling) child.previousSibling.nextSibling = child.nextSibling;
      if (child.nextSibling) child.nextSibling.previousSibling = child.previousSibling;
    }
    const last = this.childNodes.at(-1) ?? null;
    if (last) last.nextSibling = child;
    child.previousSibling = last;
    child.nextSibling = null;
    child.parentNode = this;
    this.childNodes.push(child);
    return child;
  }
  querySelector(): null {
    throw new Error("test DOM: querySelector is not supported");
  }
}

const FAKE_DOCUMENT = { createTextNode: (text: string) => new FakeText(text) };

/** The tree under `root` as the DOM nodes ProseMirror reads (comments and directives left out). */
function asDom(root: DomhandlerNode): HTMLElement {
  const top = new FakeElement("body", {});
  const stack: [DomhandlerNode, FakeElement][] = [[root, top]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, into] = entry;
    for (const child of node.children ?? []) {
      if (child.type === "text") into.appendChild(new FakeText(child.data ?? ""));
      else if (child.type === "tag" || child.type === "script" || child.type === "style") {
        const el = new FakeElement(child.name ?? "div", child.attribs ?? {});
        into.appendChild(el);
        stack.push([child, el]);
      }
    }
  }
  return top as unknown as HTMLElement;
}

const chunkId = {
  chunkId: { default: null as string | null },
};
const idOf = (dom: HTMLElement) => ({ chunkId: dom.getAttribute("data-chunk-id") });
const withId = (node: PmNode) => (node.attrs.chunkId ? { "data-chunk-id": node.attrs.chunkId } : {});

/** prosemirror-schema-basic, plus `data-chunk-id` on its block nodes. */
const schema = new Schema({
  nodes: {
    doc: { content: "block+" },
    paragraph: {
      content: "inline*",
      group: "block",
      attrs: chunkId,
      parseDOM: [{ tag: "p", getAttrs: idOf }],
      toDOM: (n) => ["p", withId(n), 0],
    },
    blockquote: {
      content: "block+",
      group: "block",
      defining: true,
      attrs: chunkId,
      parseDOM: [{ tag: "blockquote", getAttrs: idOf }],
      toDOM: (n) => ["blockquote", withId(n), 0],
    },
    horizontal_rule: {
      group: "block",
      attrs: chunkId,
      parseDOM: [{ tag: "hr", getAttrs: idOf }],
      toDOM: (n) => ["hr", withId(n)],
    },
    heading: {
      attrs: { level: { default: 1 }, ...chunkId },
      content: "inline*",
      group: "block",
      defining: true,
      parseDOM: [1, 2, 3, 4, 5, 6].map((level) => ({
        tag: `h${level}`,
        getAttrs: (dom: HTMLElement) => ({ level, ...idOf(dom) }),
      })),
      toDOM: (n) => [`h${n.attrs.level}`, withId(n), 0],
    },
    code_block: {
      content: "text*",
      marks: "",
      group: "block",
      code: true,
      defining: true,
      attrs: chunkId,
      parseDOM: [{ tag: "pre", preserveWhitespace: "full", getAttrs: idOf }],
      toDOM: (n) => ["pre", withId(n), ["code", 0]],
    },
    text: { group: "inline" },
    image: {
      inline: true,
      attrs: { src: {}, alt: { default: null }, title: { default: null } },
      group: "inline",
      draggable: true,
      parseDOM: [
        {
          tag: "img[src]",
          getAttrs: (dom: HTMLElement) => ({
            src: dom.getAttribute("src"),
            title: dom.getAttribute("title"),
            alt: dom.getAttribute("alt"),
          }),
        },
      ],
      toDOM: (n) => ["img", { src: n.attrs.src, alt: n.attrs.alt, title: n.attrs.title }],
    },
    hard_break: { inline: true, group: "inline", selectable: false, parseDOM: [{ tag: "br" }], toDOM: () => ["br"] },
  },
  marks: {
    link: {
      attrs: { href: {}, title: { default: null } },
      inclusive: false,
      parseDOM: [
        {
          tag: "a[href]",
          getAttrs: (dom: HTMLElement) => ({ href: dom.getAttribute("href"), title: dom.getAttribute("title") }),
        },
      ],
      toDOM: (m) => ["a", { href: m.attrs.href, title: m.attrs.title }, 0],
    },
    em: {
      parseDOM: [
        { tag: "i" },
        { tag: "em" },
        { style: "font-style=italic" },
        { style: "font-style=normal", clearMark: (m) => m.type.name === "em" },
      ],
      toDOM: () => ["em", 0],
    },
    strong: {
      parseDOM: [
        { tag: "strong" },
        { tag: "b", getAttrs: (dom: HTMLElement) => dom.style.fontWeight !== "normal" && null },
        { style: "font-weight=400", clearMark: (m) => m.type.name === "strong" },
        { style: "font-weight", getAttrs: (value: string) => /^(bold(er)?|[5-9]\d{2,})$/.test(value) && null },
      ],
      toDOM: () => ["strong", 0],
    },
    code: { parseDOM: [{ tag: "code" }], toDOM: () => ["code", 0] },
  },
});
const parser = DOMParser.fromSchema(schema);

const CORPUS = new URL("../../../test/fixtures/corpus/", import.meta.url);
// Files the upload refuses on purpose (encrypted, damaged, a legacy .doc).
const REFUSED = new Set([
  "doc/tika-testWORD_various.doc",
  "docx/tika-testWORD_protected_passtika.docx",
  "docx/poi-truncated62886.docx",
  "pdf/pdf2json-i43_err_encrypted.pdf",
  "pdf/pdf2json-i243_err_file_anon-broken-xref.pdf",
]);
const FILES = readdirSync(CORPUS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(new URL(`${d.name}/`, CORPUS)).map((f) => `${d.name}/${f}`))
  .filter((name) => !REFUSED.has(name))
  .sort();

/** The parsed document of `html` (an HTML string as Redline sends it). */
const parse = (html: string) => parser.parse(asDom(loadHtml(html).root()[0] as unknown as DomhandlerNode));

const KNOWN_BLOCKS = /^<(p|h[1-6]|blockquote|hr|pre)\b/;

afterAll(async () => {
  await closeDefaultConverterPool();
});

describe("a ProseMirror basic schema with data-chunk-id parses what Redline sends", () => {
  it("covers the corpus", () => {
    expect(FILES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(FILES)("%s", { timeout: 180_000 }, async (name) => {
    // The large procurement docx takes a while on a busy machine: the upload bound is not under test.
    const converted = await convertDocument(name.split("/")[1], readFileSync(new URL(name, CORPUS)), {
      timeoutMs: 110_000,
    });
    const { chunks, html } = chunkHtml(converted.html, { parts: "keep" });
    expect(chunks.length).toBeGreaterThan(0);
    const doc = parse(html);
    doc.check();
    const ids = new Set<string>();
    doc.descendants((node) => {
      if (node.attrs.chunkId) ids.add(node.attrs.chunkId);
    });
    for (const chunk of chunks) {
      // An updated_html carries one chunk.
      const alone = parse(chunk.html);
      alone.check();
      if (KNOWN_BLOCKS.test(chunk.html)) expect(ids.has(chunk.chunkId), chunk.html.slice(0, 120)).toBe(true);
    }
  });

  it("a horizontal rule carries its chunk id through the schema", () => {
    const { html, chunks } = chunkHtml("<p>Above</p><hr><p>Below</p>");
    const doc = parse(html);
    expect(doc.child(1).type.name).toBe("horizontal_rule");
    expect(doc.child(1).attrs.chunkId).toBe(chunks[1].chunkId);
  });
});
