// The read-only document view: a ProseMirror EditorView over the document's HTML (schema.ts),
// with decorations marking chunks: proposed edits and deletions (review), proposed new blocks as
// widgets after their anchor chunk, and chunks changed by the last turn or another session.
import { DOMSerializer, type Node } from "prosemirror-model";
import { EditorState } from "prosemirror-state";
import { Decoration, DecorationSet, EditorView } from "prosemirror-view";
import { chunkIdOf, element, type HtmlAttrs, parseHtml, schema } from "./schema.js";

/** How a chunk is highlighted. */
export type Highlight = "proposed-edit" | "proposed-delete" | "changed" | "synced" | "focus";

/** A block a pending change would add, shown after `afterChunkId` (or at the end). */
export interface ProposedBlock {
  changeId: string;
  afterChunkId?: string;
  html: string;
}

/** Fetches an image the page cannot load by URL (GET /v1/media needs the key) as a blob: URL. */
export type MediaLoader = (src: string) => Promise<string | undefined>;

/** A document view mounted in `place`. */
export class DocView {
  private readonly view: EditorView;
  private highlights = new Map<string, Highlight[]>();
  private proposed: ProposedBlock[] = [];
  private html = "";

  constructor(place: HTMLElement, loadMedia: MediaLoader) {
    this.view = new EditorView(place, {
      state: EditorState.create({ schema }),
      editable: () => false,
      attributes: { class: "rl-document", "aria-label": "Document" },
      decorations: () => this.decorations(),
      nodeViews: {
        // Images of stored documents are /v1/media/<sha256> URLs, readable only with the key;
        // inline data: images show as they are. Remote ones (kept by ingest's REMOTE_IMAGES=keep)
        // are not loaded: the CSP allows no other host, and loading would tell it who reads.
        image: (node) => {
          const attrs = { ...(node.attrs.attrs as HtmlAttrs) };
          const src = attrs.src ?? "";
          if (!src.startsWith("/v1/media/") && !/^data:image\//i.test(src)) {
            const label = attrs.alt ? `image: ${attrs.alt}` : "remote image";
            const dom = document.createElement("span");
            dom.className = "rl-remote-image";
            dom.textContent = `[${label}]`;
            dom.title = `Not loaded here: ${src}`;
            return { dom };
          }
          const needsKey = src.startsWith("/v1/media/");
          if (needsKey) delete attrs.src;
          const dom = element("img", attrs) as HTMLImageElement;
          if (needsKey)
            void loadMedia(src).then((url) => {
              if (url) dom.src = url;
            });
          return { dom };
        },
      },
    });
  }

  /** The HTML currently shown. */
  get currentHtml(): string {
    return this.html;
  }

  /** Shows `html` (a whole document); highlights stay keyed by chunk id. */
  setHtml(html: string): void {
    this.html = html;
    this.view.updateState(EditorState.create({ schema, doc: parseHtml(html) }));
  }

  /** Replaces the highlights: chunk id → how it is marked; `proposed`: blocks a pending change would add. */
  setHighlights(highlights: Map<string, Highlight[]>, proposed: ProposedBlock[] = []): void {
    this.highlights = highlights;
    this.proposed = proposed;
    this.view.setProps({ decorations: () => this.decorations() });
  }

  /** Scrolls the chunk into view, if the document has it. */
  reveal(chunkId: string, smooth = true): void {
    const dom = this.view.dom.querySelector(`[data-chunk-id="${CSS.escape(chunkId)}"]`);
    dom?.scrollIntoView({ block: "center", behavior: smooth ? "smooth" : "instant" });
  }

  /** How many chunks the document has (elements with a chunk id). */
  chunkCount(): number {
    let n = 0;
    this.view.state.doc.descendants((node) => {
      if (chunkIdOf(node)) n++;
    });
    return n;
  }

  private decorations(): DecorationSet {
    const doc = this.view?.state.doc;
    if (!doc) return DecorationSet.empty;
    const decos: Decoration[] = [];
    const ends = new Map<string, number>();
    doc.descendants((node, pos) => {
      const id = chunkIdOf(node);
      if (!id) return true;
      ends.set(id, pos + node.nodeSize);
      const marks = this.highlights.get(id);
      if (marks?.length) {
        decos.push(
          Decoration.node(pos, pos + node.nodeSize, {
            class: marks.map((m) => `rl-${m}`).join(" "),
          }),
        );
      }
      return true;
    });
    for (const block of this.proposed) {
      const at = (block.afterChunkId ? ends.get(block.afterChunkId) : undefined) ?? doc.content.size;
      decos.push(
        Decoration.widget(at, () => proposedBlockDom(block), {
          key: `proposed-${block.changeId}`,
          side: 1,
        }),
      );
    }
    return DecorationSet.create(doc, decos);
  }
}

/** A proposed new block, rendered through the schema (so the same sanitizing applies). */
function proposedBlockDom(block: ProposedBlock): HTMLElement {
  const wrap = document.createElement("div");
  wrap.className = "rl-proposed-create";
  wrap.dataset.changeId = block.changeId;
  const fragment = DOMSerializer.fromSchema(schema).serializeFragment(parseHtml(block.html).content);
  wrap.append(fragment);
  return wrap;
}

/** The plain text of a chunk's HTML (for cards and diffs). */
export function htmlText(html: string): string {
  const doc: Node = parseHtml(html);
  return doc.textBetween(0, doc.content.size, "\n", " ").trim();
}
