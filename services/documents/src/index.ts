export { commitOperations } from "./commands/commit.js";
export { archiveDocument, listDocumentEvents, listDocuments, unarchiveDocument } from "./commands/library.js";
export { createDocument, deriveTitle, replaceDocument } from "./commands/load.js";
export { getDocument } from "./commands/read.js";
export { diffChunks, saveDocument } from "./commands/save.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export {
  type DocumentsConfig,
  documentsHandlers,
  libraryHandlers,
  type RunningDocumentsService,
  startDocumentsService,
} from "./service.js";
