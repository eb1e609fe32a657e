// Tag classification driving the chunking rules (see chunkHtml).

export const HEADING_TAGS: ReadonlySet<string> = tagSet("h1 h2 h3 h4 h5 h6");

/** Blocks that are always one chunk, whatever they contain. */
export const ATOMIC_BLOCK_TAGS: ReadonlySet<string> = new Set([
  ...HEADING_TAGS,
  ...words("p ul ol menu dl table blockquote pre hr figure"),
]);

/** Containers that are unwrapped when they hold blocks, and are one chunk otherwise. */
export const WRAPPER_TAGS: ReadonlySet<string> = tagSet(
  "div section article main header footer nav aside center address hgroup form fieldset details dialog search",
);

/**
 * Elements that cannot stand alone as a chunk and are always unwrapped:
 * document structure and stray table parts (a <td> outside a table).
 */
export const ALWAYS_UNWRAP_TAGS: ReadonlySet<string> = tagSet(
  "html body tbody thead tfoot tr td th caption colgroup col figcaption legend summary",
);

/**
 * Elements whose content never belongs to the document text. Raw-text
 * elements (textarea, xmp, iframe, ...) are here too because the parser and
 * the serializer disagree on escaping inside them, which would break the
 * fixed point when chunking unsanitized HTML.
 */
export const DROPPED_TAGS: ReadonlySet<string> = tagSet(
  "head title meta link base style script noscript template textarea xmp iframe noembed noframes plaintext",
);

/** Stray list items are regrouped into a list of this tag. */
export const LOOSE_ITEM_CONTAINER: Readonly<Record<string, string>> = { li: "ul", dt: "dl", dd: "dl" };

/** Tags accepted as the single element of a chunk. */
export const CHUNK_TAGS: ReadonlySet<string> = new Set([...ATOMIC_BLOCK_TAGS, ...WRAPPER_TAGS]);

/** Anything that breaks the inline flow; used to decide whether a wrapper holds blocks. */
export const BLOCK_LEVEL_TAGS: ReadonlySet<string> = new Set([
  ...ATOMIC_BLOCK_TAGS,
  ...WRAPPER_TAGS,
  ...ALWAYS_UNWRAP_TAGS,
  ...words("li dt dd"),
]);

/** A set of lower-case tag names from a space-separated list. */
export function tagSet(list: string): ReadonlySet<string> {
  return new Set(words(list));
}

/** Splits a space-separated list of names. */
export function words(list: string): string[] {
  return list.split(/\s+/).filter(Boolean);
}
