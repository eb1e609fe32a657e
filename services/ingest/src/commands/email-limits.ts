// Guards of the email export (unshown-parts.md, Export): the mail goes to an address the caller
// chooses, so nothing in it is the caller's text except a sanitized filename, and each account
// may send only so many per hour. The count lives in Postgres (ingest.exports), so the cap holds
// across ingest processes.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { type Knex, RedlineError } from "@redline/service-kit";
import type { ExportRow } from "../db/tables.js";
import { EXPORT_MEDIA, type ExportFormat } from "../export/export-formats.js";

/** The subject of every export mail: fixed, so a caller cannot write it. */
export const EMAIL_EXPORT_SUBJECT = "Your Redline export is ready";
/** Default of IngestConfig.emailExportsPerHour (EMAIL_EXPORTS_PER_HOUR). */
export const DEFAULT_EMAIL_EXPORTS_PER_HOUR = 20;
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
 * Inserts the queued email export `row` if its owner sent fewer than `perHour` email exports in
 * the last hour (every queued, sent or failed request counts); else throws EmailExportLimitError
 * with Retry-After = seconds until the oldest counted one leaves the window (at least 1). A
 * per-owner advisory lock makes count and insert one step for concurrent requests.
 */
export async function insertWithinEmailCap(
  db: Knex,
  row: Pick<ExportRow, "id" | "owner_id" | "session_id" | "format" | "filename" | "recipient_email">,
  perHour: number,
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtext(?))", [`email-export:${row.owner_id}`]);
    // The database's clock, so every ingest process counts the same window.
    const recent = (await trx<ExportRow>("exports")
      .where({ owner_id: row.owner_id, kind: "email" })
      .andWhere("created_at", ">", trx.raw("now() - interval '1 hour'"))
      .orderBy("created_at", "desc")
      .limit(perHour)
      .select(trx.raw("extract(epoch from created_at + interval '1 hour' - now()) as wait_seconds"))) as unknown as {
      wait_seconds: string | number;
    }[];
    if (recent.length >= perHour) {
      // The perHour-th newest request frees a slot when it leaves the window.
      const wait = Number(recent[perHour - 1].wait_seconds);
      throw new EmailExportLimitError(perHour, Math.max(1, Math.ceil(wait)));
    }
    await trx<ExportRow>("exports").insert({ ...row, kind: "email", status: "queued" });
  });
}
