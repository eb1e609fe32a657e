// The session's attachments and the caller's templates as the engines see them (TurnFiles),
// over ingest's FilesService with the caller's identity. File features never fail a turn: when
// ingest cannot answer, a search finds nothing and the turn goes on.
import type { CallOpts, Logger } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { TurnFiles, TurnInput } from "../engines/types.js";

/** TurnFiles bound to one session and caller; `attachmentCount` as sessionAttachments found it. */
export function turnFiles(
  ctx: AgentContext,
  sessionId: string,
  opts: CallOpts,
  log: Logger,
  attachmentCount: number,
): TurnFiles {
  return {
    attachmentCount,
    async searchAttachments(query, filename, limit) {
      const res = await ctx.files.searchAttachments(
        { sessionId, query, filename: filename ?? "", limit: limit ?? 5 },
        opts,
      );
      return res.passages.map((p) => ({ filename: p.filename, chunkIndex: p.chunkIndex, text: p.text }));
    },
    async getTemplate(ref) {
      try {
        const res = await ctx.files.getTemplate({ templateRef: ref }, opts);
        return { name: res.template?.name ?? ref, title: res.template?.title ?? "", html: res.html };
      } catch (err) {
        log.debug({ err, ref }, "template not found");
        return null;
      }
    },
  };
}

/**
 * The session's completed attachments: how many, and the images among them as vision input
 * (none when ingest is unavailable).
 */
export async function sessionAttachments(
  ctx: AgentContext,
  sessionId: string,
  opts: CallOpts,
  log: Logger,
): Promise<{ count: number; images: TurnInput["images"] }> {
  try {
    const res = await ctx.files.searchAttachments({ sessionId, query: "", filename: "", limit: 1 }, opts);
    const images = res.images.map((i) => ({ name: i.filename, mimeType: i.mimeType, base64Data: i.base64Data }));
    return { count: res.attachmentCount, images };
  } catch (err) {
    log.warn({ err }, "attachment images unavailable");
    return { count: 0, images: [] };
  }
}
