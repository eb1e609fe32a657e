// The scenario of each loop kind.
import type { Scenario } from "../client.js";
import type { LoopKind } from "../model.js";
import { asyncChat } from "./async-chat.js";
import { docEvents } from "./doc-events.js";
import { exportDocument } from "./export.js";
import { presignedUpload } from "./presigned-upload.js";
import { save } from "./save.js";
import { syncChat } from "./sync-chat.js";
import { upload } from "./upload.js";

/** What a client sends for each kind of its loop. */
export const SCENARIOS: Record<LoopKind, Scenario> = {
  sync_chat: syncChat,
  async_chat: asyncChat,
  save,
  doc_events: docEvents,
  upload,
  presigned_upload: presignedUpload,
  export: exportDocument,
};

export { CHAT_WORDS } from "./sync-chat.js";
