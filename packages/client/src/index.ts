// @redline/client: the typed client of the Redline API (browser-safe; Node-only file helpers are
// in @redline/client/node). `client.api` is openapi-fetch over the generated `paths`; the helpers
// cover uploads, chat, the progress stream, approvals, exports, versions and usage.
export {
  createRedlineClient,
  DEFAULT_PRESIGN_ABOVE_BYTES,
  type ExportDocumentOptions,
  type ExportedFile,
  type ExportSource,
  RedlineClient,
  type RedlineClientOptions,
  type UploadFile,
  type UploadOptions,
} from "./client.js";
export { RedlineApiError } from "./errors.js";
export type { components, operations, paths } from "./gen/schema.js";
export { type SseEvent, SseParser } from "./sse.js";
export { type JobStreamEvent, proposedChanges, type StreamJobOptions } from "./stream.js";
export type * from "./types.js";
