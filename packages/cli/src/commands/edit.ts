// `redline edit FILE -p PROMPT`: upload FILE, run PROMPT on it as an async chat job, and write the
// result in FILE's own format. The gateway writes a document back into its original when the
// export has the upload's format (docx, markdown, txt: untouched blocks keep the original's
// bytes), so the CLI exports the session's document in that format and replaces the file.
import { basename, resolve } from "node:path";
import type { RedlineClient } from "@redline/client";
import { createTwoFilesPatch } from "diff";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { readInput, writeAtomically } from "../files.js";
import { type ExportFormat, editTarget, outputFormat } from "../formats.js";
import { type CompletedJob, runChatJob } from "../job-runner.js";
import { aroundChange, htmlText } from "../review.js";

/** What the edit writes and how. */
interface EditPlan {
  file: string;
  out: string;
  format: ExportFormat;
  /** Format of the input, for the dry run's "before" text. */
  inputFormat: ExportFormat;
  prompt: string;
  review: boolean;
  trackChanges: boolean;
  dryRun: boolean;
  sessionId?: string;
}

function plan(ctx: CommandContext): EditPlan {
  const { values, positionals } = ctx;
  const [file, ...extra] = positionals;
  if (!file) throw new UsageError("edit needs a FILE: redline edit FILE -p PROMPT");
  if (extra.length > 0) throw new UsageError(`edit takes one FILE (got also ${extra.join(" ")})`);
  const prompt = (values.prompt as string | undefined)?.trim();
  if (!prompt) throw new UsageError('edit needs a prompt: -p "…"');
  const target = editTarget(file);
  const output = values.output as string | undefined;
  const format = output ? outputFormat(output, target.format) : target.format;
  const trackChanges = values["track-changes"] === true;
  if (trackChanges && format !== "docx") throw new UsageError(`--track-changes writes Word files, not ${format}`);
  return {
    file,
    out: output ?? target.defaultOut,
    format,
    inputFormat: target.format,
    prompt,
    review: values.review === true,
    trackChanges,
    dryRun: values["dry-run"] === true,
    sessionId: values.session as string | undefined,
  };
}

/** Runs the edit; prints the reply and the changes, or (--dry-run) a unified diff, or (--json) one result. */
export async function editCommand(ctx: CommandContext): Promise<void> {
  const p = plan(ctx);
  const { reporter } = ctx;
  const bytes = await readInput(p.file);
  const client = await ctx.client();

  reporter.stage("upload", 0, basename(p.file));
  const uploaded = await client.upload(
    { filename: basename(p.file), data: bytes },
    { sessionId: p.sessionId, returnHtml: p.dryRun },
  );
  reporter.progress(100, `${uploaded.chunks_count ?? 0} blocks`);
  reporter.done();
  for (const w of uploaded.warnings) reporter.note(`warning: ${w}`);
  const sessionId = uploaded.session_id;
  if (!sessionId) throw new Error("The upload answered no session");

  const job = await runChatJob(
    client,
    { message: p.prompt, session_id: sessionId, ...(uploaded.document_id && { document_id: uploaded.document_id }) },
    ctx.io,
    reporter,
    { review: p.review },
  );
  const changes = job.result.document_changes?.chunk_diffs ?? [];
  const documentId = uploaded.durable_document_id ?? uploaded.document_id;

  if (p.dryRun) {
    const before =
      p.inputFormat === "markdown" || p.inputFormat === "txt"
        ? new TextDecoder().decode(bytes)
        : await exportText(client, { html: uploaded.html ?? "" }, diffFormat(p.inputFormat));
    const after = await exportText(client, { sessionId, documentId }, diffFormat(p.inputFormat));
    const patch = createTwoFilesPatch(p.file, p.out, before, after, "original", "edited");
    if (before === after) reporter.note(`No changes: ${job.result.response.trim()}`);
    reporter.result(patch);
    reporter.resultJson(summary(p, job, sessionId, documentId, { written: false, diff: patch }));
    return;
  }

  const unchanged = changes.length === 0 && resolve(p.out) === resolve(p.file) && p.format === p.inputFormat;
  let warnings: string[] = [];
  if (!unchanged) {
    const sinceVersion = p.trackChanges ? await loadedSeq(client, documentId, uploaded.version_id) : undefined;
    const file = await client.exportDocument({
      sessionId,
      documentId,
      format: p.format,
      ...(p.trackChanges && { trackChanges: true, sinceVersion }),
    });
    warnings = file.warnings;
    await writeAtomically(p.out, file.bytes);
  }
  for (const w of warnings) reporter.note(`warning: ${w}`);
  reporter.resultJson(summary(p, job, sessionId, documentId, { written: !unchanged, warnings }));
  const lines = [job.result.response.trim()];
  for (const c of changes) {
    lines.push(`  [${c.operation} ${c.chunk_id}] ${c.ai_explanation ?? ""}`.trimEnd());
    const [before, after] = aroundChange(htmlText(c.old_html ?? ""), htmlText(c.new_html ?? ""));
    if (c.old_html) lines.push(`    - ${clip(before)}`);
    if (c.new_html) lines.push(`    + ${clip(after)}`);
  }
  lines.push(unchanged ? `No changes: ${p.file} left as it is` : `Wrote ${p.out}`);
  reporter.result(lines.join("\n"));
}

const clip = (s: string) => (s.length > 160 ? `${s.slice(0, 159)}…` : s);

/** The text form a dry run compares: the file's own text format, else markdown (html stays html). */
function diffFormat(format: ExportFormat): ExportFormat {
  return format === "txt" || format === "markdown" || format === "html" ? format : "markdown";
}

async function exportText(
  client: RedlineClient,
  source: { html: string } | { sessionId: string; documentId?: string },
  format: ExportFormat,
): Promise<string> {
  const file = await client.exportDocument({ ...source, format });
  return new TextDecoder().decode(file.bytes);
}

/**
 * The seq of the version the upload created, the base of the tracked changes: a session reused
 * with --session may hold a document with earlier versions, whose edits are not this run's.
 */
async function loadedSeq(
  client: RedlineClient,
  documentId: string | undefined,
  versionId: string | undefined,
): Promise<number | undefined> {
  if (!documentId || !versionId) return undefined;
  const list = await client.listVersions(documentId);
  return list.versions.find((v) => v.version_id === versionId)?.seq;
}

function summary(
  p: EditPlan,
  job: CompletedJob,
  sessionId: string,
  documentId: string | undefined,
  extra: Record<string, unknown>,
) {
  const changes = job.result.document_changes;
  return {
    file: p.file,
    output: p.out,
    format: p.format,
    session_id: sessionId,
    document_id: documentId,
    job_id: job.job_id,
    version_id: changes?.version_id,
    response: job.result.response,
    changes: changes?.chunk_diffs ?? [],
    usage: job.result.usage,
    ...extra,
  };
}
