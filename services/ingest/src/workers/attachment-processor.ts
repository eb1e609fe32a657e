// Attachment processing (interface-spec, Attachment processing states): pending → processing →
// completed | failed, in this process after the reply; a restart resumes unfinished rows. A
// worker, not a command: context.ts builds it from its own parts, so it names what it needs
// (ProcessingDeps) instead of the context.
import { InputError, type Logger, RedlineError } from "@redline/service-kit";
import { convertDocument } from "../convert.js";
import * as store from "../db/store/attachments.js";
import type { AttachmentRow } from "../db/tables.js";
import type { ConvertLimits } from "../formats.js";
import { type ConverterPool, seconds } from "../sandbox/pool.js";
import { type FilesStorage, requireStorage } from "../storage.js";

// Longest passage stored per chunk: a giant table cell should not become one huge search hit.
const MAX_CHUNK_TEXT = 4000;

/** What processing needs (a subset of IngestContext): storage, the converter pool, limits, a logger. */
export interface ProcessingDeps {
  storage: FilesStorage | null;
  pool: ConverterPool;
  limits: ConvertLimits;
  log: Logger;
}

/** Runs attachment processing in this process, one at a time per attachment, after the reply. */
export class AttachmentProcessor {
  private readonly running = new Set<string>();
  private closed = false;

  constructor(private readonly ctx: ProcessingDeps) {}

  /** Schedules processing of `id` (no-op when it is already running). */
  schedule(id: string): void {
    if (this.closed || this.running.has(id)) return;
    this.running.add(id);
    setImmediate(() => {
      this.process(id)
        .catch((err) => this.ctx.log.error({ err, attachmentId: id }, "attachment processing crashed"))
        .finally(() => this.running.delete(id));
    });
  }

  /** Picks up attachments a previous process left pending or processing (a restart). */
  async resume(): Promise<void> {
    if (!this.ctx.storage) return;
    for (const id of await store.unfinishedAttachmentIds(this.ctx.storage.db)) this.schedule(id);
  }

  /** Stops scheduling; work in flight finishes or is dropped with the process. */
  close(): void {
    this.closed = true;
  }

  private async process(id: string): Promise<void> {
    const storage = requireStorage(this.ctx);
    const row = await store.claimAttachment(storage.db, id);
    if (!row) return;
    const outcome = row.kind === "document" ? await this.extract(storage, row) : { texts: [], error: "" };
    await storage.db.transaction(async (tx) => {
      // A delete while processing cancels: the row is gone from the session, nothing is stored.
      if (!(await store.lockLiveAttachment(tx, id))) return;
      if (outcome.error) await store.failAttachment(tx, id, outcome.error);
      else await store.completeAttachment(tx, id, outcome.texts);
    });
  }

  /** The chunk texts of a document attachment, or the error the user sees. */
  private async extract(storage: FilesStorage, row: AttachmentRow): Promise<{ texts: string[]; error: string }> {
    try {
      const bytes = await storage.store.get(row.object_key);
      const texts = await this.chunkTexts(await this.convert(row, bytes));
      if (texts.length > 0) return { texts, error: "" };
      return {
        texts,
        error: "No text could be extracted from the file; if it is a scan, upload the pages as images instead",
      };
    } catch (err) {
      if (err instanceof RedlineError) return { texts: [], error: String(err.detail) };
      this.ctx.log.error({ err, attachmentId: row.id }, "attachment conversion failed");
      return { texts: [], error: "The file could not be processed; upload it again or convert it to PDF first" };
    }
  }

  private async convert(row: AttachmentRow, bytes: Buffer): Promise<string> {
    const convert = () => convertDocument(row.filename, bytes, this.ctx.limits, this.ctx.pool);
    // A worker that died for another reason than the file (a restart, a crash) gets one more try.
    const converted = await convert().catch((err: unknown) => {
      if (err instanceof RedlineError) throw err;
      this.ctx.log.warn({ err, attachmentId: row.id }, "attachment conversion crashed; retrying once");
      return convert();
    });
    return converted.html;
  }

  private chunkTexts(html: string): Promise<string[]> {
    const { timeoutMs } = this.ctx.limits;
    return this.ctx.pool.runTask<string[]>(
      { kind: "chunk-texts", html, maxChars: MAX_CHUNK_TEXT },
      {
        timeoutMs,
        onTimeout: () => new InputError(`The file's text took longer than ${seconds(timeoutMs)} s to index; split it`),
        onOutOfMemory: (mb) => new InputError(`The file's text needs more than ${mb} MB of memory to index; split it`),
      },
    );
  }
}
