// The decorations shown on the document, as layers that are set independently and merged:
// `review` (pending proposed changes), `changed` (chunks the last turn or decision committed),
// `synced` (chunks another session committed). Each set redraws the view.
import type { Highlight, ProposedBlock } from "./doc-view.js";
import { view } from "./session.js";

type Layer = "review" | "changed" | "synced";

const layers = new Map<Layer, Map<string, Highlight>>();
let proposedBlocks: ProposedBlock[] = [];

/** Replaces one layer: chunk id → highlight. */
export function setLayer(layer: Layer, chunks: Map<string, Highlight>): void {
  layers.set(layer, chunks);
  redraw();
}

/** The blocks pending changes would add (shown as widgets). */
export function setProposedBlocks(blocks: ProposedBlock[]): void {
  proposedBlocks = blocks;
  redraw();
}

/** A layer of `ids` all marked `how`. */
export function mark(ids: Iterable<string>, how: Highlight): Map<string, Highlight> {
  return new Map([...ids].map((id) => [id, how] as const));
}

function redraw(): void {
  const merged = new Map<string, Highlight[]>();
  for (const chunks of layers.values()) {
    for (const [id, how] of chunks) merged.set(id, [...(merged.get(id) ?? []), how]);
  }
  view().setHighlights(merged, proposedBlocks);
}
