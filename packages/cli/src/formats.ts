// Which export format a file is written back in: a file's own format where Redline exports it
// (.docx, .md, .txt, .html), Word for the input-only formats (.pdf is read, not rebuilt; .rtf
// is an input format only, interface-spec "What the service does" 8).
import { extname } from "node:path";
import { UsageError } from "./errors.js";

/** The export formats of POST /v1/documents/export. */
export const EXPORT_FORMATS = ["docx", "pdf", "html", "markdown", "txt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Upload extensions the gateway accepts (interface-spec, Errors rule 1). */
const UPLOADABLE = [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"];

/** The export format of an output file, by its extension; undefined for one Redline cannot write. */
export function formatOfPath(path: string): ExportFormat | undefined {
  const ext = extname(path).toLowerCase();
  const byExt: Record<string, ExportFormat> = {
    ".docx": "docx",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "txt",
  };
  return byExt[ext];
}

/** The file extension an export format is written with. */
export function extensionOf(format: ExportFormat): string {
  return { docx: ".docx", pdf: ".pdf", html: ".html", markdown: ".md", txt: ".txt" }[format];
}

/** What `redline edit` writes for an input: its format, and the default output path. */
export interface EditTarget {
  format: ExportFormat;
  /** The input itself, except .pdf/.rtf → the same name with .docx. */
  defaultOut: string;
}

/** The edit target of an input file; an extension the gateway does not take is a usage error. */
export function editTarget(input: string): EditTarget {
  const ext = extname(input).toLowerCase();
  if (!UPLOADABLE.includes(ext))
    throw new UsageError(`Cannot edit ${ext || "a file without an extension"}: use one of ${UPLOADABLE.join(" ")}`);
  if (ext === ".pdf" || ext === ".rtf")
    return { format: "docx", defaultOut: `${input.slice(0, input.length - ext.length)}.docx` };
  return { format: formatOfPath(input) as ExportFormat, defaultOut: input };
}

/** The format of an explicit `-o OUT`: its extension's, else (no or unknown extension) the input's. */
export function outputFormat(out: string, fallback: ExportFormat): ExportFormat {
  return formatOfPath(out) ?? fallback;
}

/** Formats whose export is text (a dry run diffs it as text; the others by their extracted text). */
export function isTextFormat(format: ExportFormat): boolean {
  return format === "markdown" || format === "txt" || format === "html";
}
