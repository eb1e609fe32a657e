// The shapes shared by the front door, the converters and the sandbox: supported extensions,
// the conversion result, page setup and the resource limits every conversion runs under.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError, UnsupportedMediaTypeError } from "@redline/service-kit";
import type { ConvertedSource, SourceFormat } from "./sources/types.js";

/** Upload extensions the service accepts (interface-spec fact 8); anything else is a 415. */
export const SUPPORTED_EXTENSIONS = [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"] as const;

export type SupportedExtension = (typeof SUPPORTED_EXTENSIONS)[number];

/** The detected format, as carried in ConvertDocumentResponse.format. */
export type DocumentFormat = "docx" | "pdf" | "html" | "md" | "txt" | "rtf";

const FORMAT_BY_EXTENSION: Record<SupportedExtension, DocumentFormat> = {
  ".pdf": "pdf",
  ".docx": "docx",
  ".txt": "txt",
  ".rtf": "rtf",
  ".md": "md",
  ".html": "html",
  ".htm": "html",
};

/**
 * The MIME type of each upload extension: the one mapping of the service (attachments record
 * it; ListFormats hands it to the agent for a chat job's metadata.content_type).
 */
export const CONTENT_TYPE_BY_EXTENSION: Record<SupportedExtension, string> = {
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".txt": "text/plain",
  ".rtf": "application/rtf",
  ".md": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
};

/** Page margins in inches. */
export interface PageMargins {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** A named paper size, or a custom one in inches (portrait width x height). */
export type PaperSize = "Letter" | "A4" | "Legal" | { width: number; height: number };

/**
 * Page geometry of the source document (`page_setup` in the spec: `{size, orientation, margins}`).
 * `margins` is null when the format does not record them (pdf).
 */
export interface PageSetup {
  size: PaperSize;
  orientation: "portrait" | "landscape";
  margins: PageMargins | null;
}

/** What a converter produces: unsanitized, unchunked block-level HTML and its metadata. */
export interface ConvertResult {
  html: string;
  /** First heading of the document, else the file name without its extension. */
  title: string;
  /** docx and pdf only; null otherwise. */
  pageSetup: PageSetup | null;
  /** Non-fatal losses worth telling the caller about (dropped headers, accepted changes, ...). */
  warnings: string[];
  format: DocumentFormat;
  /**
   * The map back to the original file, when asked for (ConvertOptions.keepSource) and the
   * format is written back in place (docx, md, txt). The HTML then carries `data-chunk-id` on
   * every chunk, exactly the chunks the documents service will store; map keys are those ids.
   */
  source?: ConvertedSource;
}

/** What a caller asks of a conversion beyond the HTML. */
export interface ConvertOptions {
  /** Produce `ConvertResult.source` (the caller keeps the original to export in place). */
  keepSource?: boolean;
}

/** The source format of a converted document format; undefined when its original is not kept. */
export function sourceFormatOf(format: DocumentFormat): SourceFormat | undefined {
  if (format === "md") return "markdown";
  if (format === "txt" || format === "docx") return format;
  return undefined;
}

/** Bounds that keep a hostile file from using unbounded time or memory. */
export interface ConvertLimits {
  /** Wall-clock cap of one conversion, in milliseconds; past it the worker is killed (400). */
  timeoutMs: number;
  /** Most entries a docx zip may hold (zip bomb guard). */
  maxZipEntries: number;
  /** Most bytes a docx may expand to when unzipped, summed over all entries. */
  maxUncompressedBytes: number;
  /** Highest uncompressed/compressed ratio accepted for a zip entry larger than 1 MiB. */
  maxCompressionRatio: number;
  /** Most elements a converted document or an export source may have (413 past it). */
  maxElements: number;
  /** Wall-clock cap of one synchronous export's HTML work, in milliseconds (cut to the call's deadline). */
  exportTimeoutMs: number;
}

export const DEFAULT_LIMITS: ConvertLimits = {
  timeoutMs: 30_000,
  maxZipEntries: 5_000,
  maxUncompressedBytes: 200 * 1024 * 1024,
  // Deflated Word XML runs at 10-40x (the 12.5 MB procurement document.xml is 38x); a run of
  // zeros compresses ~1000x. 200x leaves room for very repetitive documents.
  maxCompressionRatio: 200,
  // A 20 MB document of ordinary paragraphs has ~300,000 elements; every element costs the DOM,
  // docx and Chromium steps memory and time, so the count is what bounds an export's work.
  maxElements: 500_000,
  exportTimeoutMs: 60_000,
};

/**
 * 413 raised in a worker when a document has more than `limits.maxElements` elements. The
 * handlers re-shape it for the caller (Errors rule 5 for uploads, rule 6 for exports).
 */
export class TooManyElementsError extends RedlineError {
  constructor(
    readonly elementCount: number,
    readonly maxElements: number,
  ) {
    super(
      413,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `The document has ${elementCount.toLocaleString("en-US")} elements; the limit is ${maxElements.toLocaleString("en-US")}`,
      { body: { element_count: elementCount, max_elements: maxElements } },
    );
  }

  /**
   * The caller's 413 for an upload or a stored export (Errors rule 5 shape, plus
   * `element_count` and `max_elements`): `detail` says the count and the limit.
   */
  asRequestTooLarge(
    requestBytes: number,
    maxBytes: number,
    supportEmail: string,
    supportEventId: string,
  ): RedlineError {
    const count = this.elementCount.toLocaleString("en-US");
    const max = this.maxElements.toLocaleString("en-US");
    return new RedlineError(
      413,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `The document has ${count} elements; the limit is ${max}. Split it into smaller documents and try again`,
      {
        body: {
          error_code: "request_too_large",
          message_user: `This document is too large to process (${count} elements; the limit is ${max}). Split it into smaller documents.`,
          request_size_mb: toMb(requestBytes),
          max_size_mb: toMb(maxBytes),
          suggested_action: "split_request",
          contact_email: supportEmail,
          support_event_id: supportEventId,
          element_count: this.elementCount,
          max_elements: this.maxElements,
        },
      },
    );
  }
}

const toMb = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 100) / 100;

/** The lower-cased extension of a file name (".docx"), or "" when it has none. */
export function extensionOf(filename: string): string {
  // Browsers may send "C:\fakepath\x.docx"; only the last path segment counts.
  const base = filename.split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot).toLowerCase() : "";
}

/** The file name without directories and extension, used as the fallback title. */
export function baseTitle(filename: string): string {
  const base = (filename.split(/[\\/]/).pop() ?? "").trim();
  const dot = base.lastIndexOf(".");
  return (dot > 0 ? base.slice(0, dot) : base).trim() || "Untitled";
}

/**
 * Formats whose converter writes out-of-flow part marks (`data-part`) from the file's own
 * structure. The others (html, md, txt) carry whatever marks the author typed, which a load
 * must not trust.
 */
export const FORMATS_WITH_PARTS: ReadonlySet<DocumentFormat> = new Set<DocumentFormat>(["docx", "rtf", "pdf"]);

/**
 * Picks the format for a file name by its extension.
 * Throws UnsupportedMediaTypeError (415, detail lists SUPPORTED_EXTENSIONS) for any other
 * extension, including legacy `.doc` and names without an extension.
 */
export function formatForFilename(filename: string): DocumentFormat {
  const ext = extensionOf(filename);
  const format = FORMAT_BY_EXTENSION[ext as SupportedExtension];
  if (!format) throw new UnsupportedMediaTypeError(ext, SUPPORTED_EXTENSIONS);
  return format;
}
