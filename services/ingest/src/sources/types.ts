// A loaded document's original file and where each of its chunks came from in it: what lets an
// export write the original back with only the edited blocks changed (edit in place), and what
// tracked changes are written against. Shared by the converters (which produce a map), the
// source store (which keeps file + map in the object store) and the exporters (which splice).

/** Formats whose original file is kept and written back in place. */
export type SourceFormat = "docx" | "markdown" | "txt";

/**
 * Where one chunk sits in the original file.
 * - `block`: docx; `index` is the position among the body's block-level children of `w:body`
 *   (w:p, w:tbl, w:sdt, ...; w:sectPr excluded), `count` how many consecutive ones the chunk
 *   covers (default 1).
 * - `bytes`: markdown/txt; the half-open byte range [start, end) of the block's source text,
 *   without the separating blank lines.
 */
export type SourceSpan =
  | { kind: "block"; index: number; count?: number }
  | { kind: "bytes"; start: number; end: number };

/** Chunk id → its span, for every in-flow chunk the converter made from the file. */
export interface SourceMap {
  format: SourceFormat;
  chunks: Record<string, SourceSpan>;
}

/**
 * What a converter returns, beside its HTML, when the file can be written back in place. The
 * HTML it returns then carries `data-chunk-id` on every chunk (ids the map is keyed by; the
 * documents service keeps valid ids it is given).
 */
export interface ConvertedSource {
  map: SourceMap;
}

/** What an exporter gets for a document that has an original file. */
export interface DocumentSource {
  format: SourceFormat;
  /** The original file, byte for byte as uploaded. */
  bytes: Buffer;
  map: SourceMap;
  /**
   * Chunk id → the chunk's HTML in the version the document was loaded as. A chunk whose
   * current HTML equals this is untouched and is written back as its original bytes.
   */
  loaded: Record<string, string>;
}
