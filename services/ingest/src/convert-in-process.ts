// Dispatch to one converter, in the current thread. The sandbox worker calls this; callers
// outside ingest use convertDocument, which runs it in a worker with time and memory bounds.
import { InputError } from "@redline/service-kit";
import type { ConvertLimits, ConvertOptions, ConvertResult, DocumentFormat } from "./formats.js";

/**
 * Converts `bytes` (already known to be `format`) to HTML without any time bound.
 * Converter modules load lazily so a worker only pays for the formats it sees.
 * Throws InputError for unreadable input (each converter says why). `opts.keepSource` asks the
 * converters that write back in place (md, txt; docx when it maps) for a source map.
 */
export async function convertInProcess(
  format: DocumentFormat,
  filename: string,
  bytes: Buffer,
  limits: ConvertLimits,
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  if (bytes.length === 0) throw new InputError("The uploaded file is empty");
  switch (format) {
    case "docx":
      return (await import("./converters/docx.js")).convertDocx(bytes, filename, limits, opts);
    case "pdf":
      return (await import("./converters/pdf.js")).convertPdf(bytes, filename);
    case "html":
      return (await import("./converters/html.js")).convertHtml(bytes, filename);
    case "md":
      return (await import("./converters/markdown.js")).convertMarkdown(bytes, filename, opts);
    case "txt":
      return (await import("./converters/text.js")).convertText(bytes, filename, opts);
    case "rtf":
      return (await import("./converters/rtf.js")).convertRtf(bytes, filename);
  }
}
