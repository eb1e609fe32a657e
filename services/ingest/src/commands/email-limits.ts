// Guards of the email export (unshown-parts.md, Export): the mail goes to an address the caller
// chooses, so nothing in it is the caller's text except a sanitized filename, and each account
// may send only so many per hour. The count lives in Postgres (ingest.exports), so the cap holds
// across ingest processes.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { type Knex, RedlineError } from "@redline/service-kit";
import { insertExport, lockOwnerEmailExports, recentEmailExportWaits } from "../db/store/exports.js";
import type { ExportRow } from "../db/tables.js";
import { EXPORT_MEDIA, type ExportFormat } from "../export/export-formats.js";

/** The subject of every export mail: fixed, so a caller cannot write it. */
export const EMAIL_EXPORT_SUBJECT = "Your Redline export is ready";
/** Longest filename stem kept (characters, before the extension). */
const MAX_STEM_CHARS = 100;

// Control, format (bidi overrides, zero-width), line/paragraph separators, private use and
// unpaired surrogates; then characters that are path separators or reserved in file names.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}]/gu;
const RESERVED = /[/\\:*?"<>|]/g;

/**
 * A filename safe for a mail body and a Content-Disposition: the last path segment of
 * `requested` without control, format or reserved characters, whitespace collapsed, at most
 * 100 characters of stem, ending in `format`'s extension (any other extension is replaced).
 * Falls back to "document" when nothing is left.
 */
export function safeExportFilename(requested: string, format: ExportFormat): string {
  const extension = EXPORT_MEDIA[format].extension;
  const lastSegment = requested.split(/[/\\]/).pop() ?? "";
  let stem = lastSegment.replace(INVISIBLE, " ").replace(RESERVED, "_").replace(/\s+/g, " ");
  // Leading dots would make a hidden file (and in "...x", ".x" is no extension).
  stem = stem.replace(/^[.\s]+/, "").trimEnd();
  // The format decides the extension: a requested one (".exe", or ".html" on a pdf) is replaced.
  if (stem.toLowerCase().endsWith(extension)) stem = stem.slice(0, -extension.length);
  stem = stem.replace(/\.[A-Za-z0-9]{1,8}$/, "");
  stem = [...stem].slice(0, MAX_STEM_CHARS).join("");
  // Windows drops trailing dots and spaces; the cut may have exposed some.
  stem = stem.replace(/^[.\s]+|[.\s]+$/g, "");
  return `${stem || "document"}${extension}`;
}

/** 429 for an account past its email exports of the hour; JSON `{detail}` with Retry-After (Errors rule 2). */
export class EmailExportLimitError extends RedlineError {
  constructor(perHour: number, retryAfterSeconds: number) {
    super(
      429,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Email export limit reached: at most ${perHour} per hour per account. Retry after ${retryAfterSeconds} seconds.`,
      { body: { code: "email_export_limit" }, headers: { "Retry-After": String(retryAfterSeconds) } },
    );
  }
}

/**
 * Records the queued email export `row` if its owner asked for fewer than `perHour` email
 * exports in the last hour (every queued, sent or failed request counts); else throws
 * EmailExportLimitError with Retry-After = seconds until the oldest counted one leaves the
 * window (at least 1). A per-owner advisory lock makes count and insert one step for
 * concurrent requests.
 */
export async function insertWithinEmailCap(
  db: Knex,
  row: Pick<ExportRow, "id" | "owner_id" | "session_id" | "format" | "filename" | "recipient_email">,
  perHour: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    await lockOwnerEmailExports(tx, row.owner_id);
    const waits = await recentEmailExportWaits(tx, row.owner_id, perHour);
    // The perHour-th newest request frees a slot when it leaves the window.
    if (waits.length >= perHour) throw new EmailExportLimitError(perHour, Math.max(1, Math.ceil(waits[perHour - 1])));
    await insertExport(tx, { ...row, kind: "email", status: "queued" });
  });
}
