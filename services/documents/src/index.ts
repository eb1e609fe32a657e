// What other packages (tests, scripts) may import from the documents service.
export { commitOperations } from "./commands/commit.js";
export { archiveDocument, listDocumentEvents, listDocuments, unarchiveDocument } from "./commands/library.js";
export { createDocument, deriveTitle, replaceDocument } from "./commands/load.js";
export { getDocument } from "./commands/read.js";
export { diffChunks, saveDocument } from "./commands/save.js";
export { getVersion, listVersions } from "./commands/versions.js";
export { type DocumentsConfig, loadConfig } from "./config.js";
export { closeContext, createContext, type DocumentsContext } from "./context.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { type RunningDocumentsService, startDocumentsService } from "./service.js";
