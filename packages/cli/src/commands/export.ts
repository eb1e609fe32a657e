// `redline export DOC_ID -f FORMAT [-o OUT]`: a saved document as a file (POST /v1/documents/export,
// not billed). OUT defaults to the server's file name in the current directory; `-o -` is stdout.
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { writeAtomically } from "../files.js";
import { EXPORT_FORMATS, type ExportFormat } from "../formats.js";

/** Writes the export and says where. */
export async function exportCommand(ctx: CommandContext): Promise<void> {
  const { values, positionals, reporter, io } = ctx;
  const [documentId, ...extra] = positionals;
  if (!documentId) throw new UsageError("export needs a DOC_ID (a saved document's id)");
  if (extra.length > 0) throw new UsageError(`export takes one DOC_ID (got also ${extra.join(" ")})`);
  const format = values.format as string | undefined;
  if (!format) throw new UsageError(`export needs -f ${EXPORT_FORMATS.join("|")}`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`Unknown format "${format}": use one of ${EXPORT_FORMATS.join(", ")}`);
  const client = await ctx.client();
  const file = await client.exportDocument({ documentId, format: format as ExportFormat });
  for (const w of file.warnings) reporter.note(`warning: ${w}`);
  const requested = values.output as string | undefined;
  if (requested === "-") {
    io.stdout.write(file.bytes);
    return;
  }
  const out = requested ?? file.filename;
  await writeAtomically(out, file.bytes);
  reporter.resultJson({
    document_id: documentId,
    format,
    output: out,
    bytes: file.bytes.length,
    warnings: file.warnings,
  });
  reporter.result(`Wrote ${out} (${file.bytes.length.toLocaleString("en-US")} bytes)`);
}
