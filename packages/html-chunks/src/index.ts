// Public API of @redline/html-chunks: the HTML chunk model shared by the
// documents service and the agent's engines.

export { applyOperations } from "./apply-operations.js";
export { type ChunkHtmlOptions, chunkHtml, type PartPolicy, partOf } from "./chunk-html.js";
export { ChunkError, type ChunkErrorCode, ToolError } from "./errors.js";
export { isValidChunkId, mintChunkId, seededChunkIds } from "./ids.js";
export { countSections, headingLevel, outline, sectionSpan, sections, tagOf, textOf } from "./outline.js";
export { type RemoteImages, type SanitizeOptions, sanitizeHtml } from "./sanitize.js";
export { hasTable, tableRows } from "./table-rows.js";
export { BLOCK_LEVEL_TAGS } from "./tags.js";
export { addTableRow, replaceText, wrapPhrase } from "./text-edits.js";
export type { ChunkOperation, ChunkRecord, OutlineEntry, Section } from "./types.js";
export { type ParseChunkOptions, parseChunk, validateChunkHtml } from "./validate.js";
export { type SearchHit, WorkingDocument } from "./working-document.js";
