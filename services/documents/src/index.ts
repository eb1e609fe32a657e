export { commitOperations } from "./commands/commit.js";
export { createDocument, deriveTitle, replaceDocument } from "./commands/load.js";
export { getDocument } from "./commands/read.js";
export { migrations, SCHEMA } from "./migrations.js";
export { DOCUMENT_EVENTS_STREAM, documentEventMessageId, documentEventSubject } from "./outbox-relay.js";
export {
  type DocumentsConfig,
  documentsHandlers,
  type RunningDocumentsService,
  startDocumentsService,
} from "./service.js";
