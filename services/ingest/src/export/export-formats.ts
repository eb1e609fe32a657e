// Shapes of an export (unshown-parts.md, Export): formats, options resolved to inches, results,
// and the rule-6 413 for a file over its format's cap.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError, SchemaError } from "@redline/service-kit";
import type { PageMargins, PageSetup, PaperSize } from "../formats.js";
import type { DocumentSource, SourceFormat } from "../sources/types.js";
import type { TrackedChangeInput } from "./docx-revisions.js";

/** The strict export formats (interface-spec fact 8); `doc` is accepted as a legacy alias of docx. */
export const EXPORT_FORMATS = ["docx", "pdf", "html", "markdown", "txt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Content type and file extension of each format. */
export const EXPORT_MEDIA: Record<ExportFormat, { contentType: string; extension: string }> = {
  docx: {
    contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    extension: ".docx",
  },
  pdf: { contentType: "application/pdf", extension: ".pdf" },
  html: { contentType: "text/html; charset=utf-8", extension: ".html" },
  markdown: { contentType: "text/markdown; charset=utf-8", extension: ".md" },
  txt: { contentType: "text/plain; charset=utf-8", extension: ".txt" },
};

/** Export options as the caller sends them (every field optional; see resolveLayout for defaults). */
export interface ExportOptions {
  paperSize?: string;
  orientation?: string;
  /** "normal" (1 in), "narrow" (0.5 in), "moderate" (1 in top/bottom, 0.75 in sides), "wide" (1 in / 2 in) or "custom". */
  margins?: string;
  customMarginsInches?: PageMargins;
  /** HTML export: inline images as data: URLs instead of links (docx and pdf always embed). */
  embedImages?: boolean;
  watermarkText?: string;
  /** 0..1, default 0.3. */
  watermarkOpacity?: number;
  /** docx only: write `ExportJob.trackedChanges` as Word revisions. */
  trackChanges?: boolean;
  /** The version tracked changes count from (resolved by the caller into trackedChanges). */
  sinceVersion?: number;
}

/** Page geometry an export is laid out on, in inches. */
export interface ExportLayout {
  /** Portrait width x height of the paper. */
  widthIn: number;
  heightIn: number;
  orientation: "portrait" | "landscape";
  margins: PageMargins;
  /** The paper's name for Chromium ("Letter", "A4", "Legal") or null for a custom size. */
  paperName: "Letter" | "A4" | "Legal" | null;
}

/** One export to produce. */
export interface ExportJob {
  /** The document's HTML (chunked or not); parts marked `data-part` are placed out of flow. */
  html: string;
  format: ExportFormat;
  /** Title for HTML `<title>`, docx core properties and the default file name. */
  title: string;
  /** The document's own page setup, used where the options say nothing. */
  pageSetup: PageSetup | null;
  options: ExportOptions;
  /** With options.trackChanges: the chunks edited since the base version. */
  trackedChanges?: TrackedChangeInput[];
  /**
   * The document's original file, of this export's format (sourceFormatForExport): untouched
   * chunks are written back as the original's bytes. Absent: generated from the HTML.
   */
  source?: DocumentSource;
}

/** The source format an export format writes back in place; undefined for pdf and html. */
export function sourceFormatForExport(format: ExportFormat): SourceFormat | undefined {
  return format === "docx" || format === "markdown" || format === "txt" ? format : undefined;
}

/**
 * 422 for track_changes on a format other than docx: only Word keeps revisions
 * (unshown-parts.md, Export).
 */
export function checkTrackChanges(format: ExportFormat, options: ExportOptions): void {
  if (options.trackChanges && format !== "docx")
    throw new SchemaError([
      {
        type: "value_error",
        loc: ["body", "options", "track_changes"],
        msg: `track_changes needs format docx (Word revisions); ${format} has no tracked changes`,
      },
    ]);
}

/** A produced file. */
export interface ExportedFile {
  bytes: Buffer;
  contentType: string;
  extension: string;
  /** Non-fatal losses (X-Export-Warnings). */
  warnings: string[];
}

const PAPER: Record<"Letter" | "A4" | "Legal", { w: number; h: number }> = {
  Letter: { w: 8.5, h: 11 },
  A4: { w: 210 / 25.4, h: 297 / 25.4 },
  Legal: { w: 8.5, h: 14 },
};

const MARGIN_PRESETS: Record<string, PageMargins> = {
  normal: { top: 1, right: 1, bottom: 1, left: 1 },
  narrow: { top: 0.5, right: 0.5, bottom: 0.5, left: 0.5 },
  moderate: { top: 1, right: 0.75, bottom: 1, left: 0.75 },
  wide: { top: 1, right: 2, bottom: 1, left: 2 },
};

/** The margins (inches) of a named preset (normal, narrow, moderate, wide; any case); undefined when unknown. */
export function marginPreset(name: string): PageMargins | undefined {
  return Object.hasOwn(MARGIN_PRESETS, name.toLowerCase()) ? MARGIN_PRESETS[name.toLowerCase()] : undefined;
}

/**
 * Normalizes a requested format: lower-cased, `doc` → `docx` (legacy alias), `md` → markdown.
 * Anything else is a 422 naming the allowed values (interface-spec Errors: format outside the enum).
 */
export function normalizeExportFormat(format: string): ExportFormat {
  const f = (format || "docx").trim().toLowerCase();
  if (f === "doc") return "docx";
  if ((EXPORT_FORMATS as readonly string[]).includes(f)) return f as ExportFormat;
  throw new SchemaError([
    {
      type: "enum",
      loc: ["body", "format"],
      msg: `Input should be 'docx', 'pdf', 'html', 'markdown', 'txt' or 'doc'`,
    },
  ]);
}

function paperOf(
  size: PaperSize | string | undefined,
): { w: number; h: number; name: ExportLayout["paperName"] } | null {
  if (!size) return null;
  if (typeof size === "object") return { w: size.width, h: size.height, name: null };
  const key = (Object.keys(PAPER) as (keyof typeof PAPER)[]).find((k) => k.toLowerCase() === size.toLowerCase());
  return key ? { ...PAPER[key], name: key } : null;
}

/**
 * The page an export is laid out on: each option when given, else the document's page setup,
 * else Letter portrait with 1 in margins. Unknown paper names or margin presets are 422s.
 */
export function resolveLayout(options: ExportOptions, pageSetup: PageSetup | null): ExportLayout {
  const issues: { type: string; loc: string[]; msg: string }[] = [];
  let paper = paperOf(options.paperSize);
  if (options.paperSize && !paper)
    issues.push({
      type: "enum",
      loc: ["body", "options", "paper_size"],
      msg: "Input should be 'Letter', 'A4' or 'Legal'",
    });
  paper ??= paperOf(pageSetup?.size) ?? { ...PAPER.Letter, name: "Letter" };

  const orientation =
    options.orientation === "landscape" || options.orientation === "portrait"
      ? options.orientation
      : (pageSetup?.orientation ?? "portrait");
  if (options.orientation && options.orientation !== "landscape" && options.orientation !== "portrait")
    issues.push({
      type: "enum",
      loc: ["body", "options", "orientation"],
      msg: "Input should be 'portrait' or 'landscape'",
    });

  let margins: PageMargins;
  const preset = options.margins?.toLowerCase();
  if (options.customMarginsInches && (!preset || preset === "custom")) margins = options.customMarginsInches;
  else if (preset && MARGIN_PRESETS[preset]) margins = MARGIN_PRESETS[preset];
  else if (preset === "custom") {
    issues.push({ type: "missing", loc: ["body", "options", "custom_margins_inches"], msg: "Field required" });
    margins = MARGIN_PRESETS.normal;
  } else if (preset) {
    issues.push({
      type: "enum",
      loc: ["body", "options", "margins"],
      msg: "Input should be 'normal', 'narrow', 'moderate', 'wide' or 'custom'",
    });
    margins = MARGIN_PRESETS.normal;
  } else margins = pageSetup?.margins ?? MARGIN_PRESETS.normal;
  const w = Math.min(paper.w, paper.h);
  const h = Math.max(paper.w, paper.h);
  for (const side of ["top", "right", "bottom", "left"] as const) {
    const m = margins[side];
    if (!Number.isFinite(m) || m < 0 || m > Math.min(w, h) / 2 - 0.5)
      issues.push({
        type: "value_error",
        loc: ["body", "options", "custom_margins_inches", side],
        msg: `Margin must be between 0 and ${Math.min(w, h) / 2 - 0.5} inches`,
      });
  }
  if (issues.length > 0) throw new SchemaError(issues);
  return { widthIn: w, heightIn: h, orientation, margins, paperName: paper.name };
}

/** Why an export is refused when it is not (only) the file's size: too many elements, or too slow to build. */
export type ExportTooLargeReason =
  | { elementCount: number; maxElements: number }
  | { timeoutSeconds: string }
  | { memoryMb: number };

/**
 * 413 for an export over its format's cap (interface-spec Errors rule 6): `detail` is an object.
 * With a `reason` the same shape says the document has too many elements (`element_count`,
 * `max_elements`) or took too long to build; `document_size_mb` is then the source's size.
 */
export class ExportTooLargeError extends RedlineError {
  constructor(
    format: ExportFormat,
    documentSizeMb: number,
    maxSizeMb: number,
    supportEmail: string,
    eventId: string,
    reason?: ExportTooLargeReason,
  ) {
    let message = `This document is too large to export as ${format} directly (${documentSizeMb} MB; the limit is ${maxSizeMb} MB). Request the export by email instead.`;
    let extra: Record<string, number> = {};
    if (reason && "elementCount" in reason) {
      message = `This document is too large to export as ${format} directly: it has ${reason.elementCount.toLocaleString("en-US")} elements; the limit is ${reason.maxElements.toLocaleString("en-US")}. Request the export by email instead.`;
      extra = { element_count: reason.elementCount, max_elements: reason.maxElements };
    } else if (reason && "memoryMb" in reason) {
      message = `This document is too large to export as ${format} directly: building it needs more than ${reason.memoryMb} MB of memory. Request the export by email instead.`;
    } else if (reason) {
      message = `This document is too large to export as ${format} directly: building it took longer than ${reason.timeoutSeconds} s. Request the export by email instead.`;
    }
    super(413, GrpcStatus.RESOURCE_EXHAUSTED, {
      error_code: "document_too_large",
      message_user: message,
      suggested_action: "email_request",
      contact_email: supportEmail,
      document_size_mb: documentSizeMb,
      max_size_mb: maxSizeMb,
      format,
      support_event_id: eventId,
      ...extra,
    });
  }
}
