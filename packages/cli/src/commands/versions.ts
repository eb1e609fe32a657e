// `redline versions DOC_ID [--restore V | --diff V [--against W]]`: a saved document's history
// (GET /v1/documents/{id}/versions), a restore (POST …/versions/{v}/restore: a new version equal to
// V, not billed) or the change records between two versions (GET …/versions/{v}/diff?against=W;
// default against V's predecessor).
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { htmlText } from "../review.js";

/** One change record of a diff (DocumentVersionDiff.changes). */
interface DiffChange {
  operation: string;
  chunk_id: string;
  old_html?: string;
  new_html?: string;
}

/** Lists, restores or diffs. */
export async function versionsCommand(ctx: CommandContext): Promise<void> {
  const { values, positionals, reporter } = ctx;
  const [documentId, ...extra] = positionals;
  if (!documentId) throw new UsageError("versions needs a DOC_ID (a saved document's id)");
  if (extra.length > 0) throw new UsageError(`versions takes one DOC_ID (got also ${extra.join(" ")})`);
  const restore = values.restore as string | undefined;
  const diff = values.diff as string | undefined;
  const against = values.against as string | undefined;
  if (restore && diff) throw new UsageError("--restore and --diff do not go together");
  if (against && !diff) throw new UsageError("--against goes with --diff");
  const client = await ctx.client();

  if (restore) {
    const restored = (await client.restoreVersion(documentId, restore)) as {
      version_id?: string;
      seq?: number;
      restored?: boolean;
    };
    reporter.resultJson(restored);
    reporter.result(
      restored.restored === false
        ? `Version ${restore} is already the current content; nothing written`
        : `Restored ${restore} as version ${restored.seq ?? ""} (${restored.version_id ?? ""})`,
    );
    return;
  }

  if (diff) {
    const result = (await client.diffVersions(documentId, diff, against)) as {
      version_id?: string;
      against_version_id?: string | null;
      changes?: DiffChange[];
    };
    reporter.resultJson(result);
    const changes = result.changes ?? [];
    const lines = [
      `${changes.length} change${changes.length === 1 ? "" : "s"} from ${result.against_version_id ?? "an empty document"} to ${result.version_id ?? diff}`,
    ];
    for (const c of changes) {
      lines.push(`[${c.operation} ${c.chunk_id}]`);
      const before = htmlText(c.old_html ?? "");
      const after = htmlText(c.new_html ?? "");
      if (before) lines.push(`  - ${before}`);
      if (after) lines.push(`  + ${after}`);
    }
    reporter.result(lines.join("\n"));
    return;
  }

  const list = await client.listVersions(documentId);
  reporter.resultJson(list);
  const rows = list.versions.map(
    (v) =>
      `${String(v.seq).padStart(4)}  ${v.version_id}  ${v.kind.padEnd(8)} ${v.created_at}  ${v.chunks_changed} chunk${v.chunks_changed === 1 ? "" : "s"}${v.summary ? `  ${v.summary}` : ""}`,
  );
  reporter.result([`${list.total} version${list.total === 1 ? "" : "s"}, newest first:`, ...rows].join("\n"));
}
