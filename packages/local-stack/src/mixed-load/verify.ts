// After the load: every acknowledged write checked against the server (saves in the history,
// uploads with their text, jobs terminal, each key charged exactly what its turns said).
import { setTimeout as sleep } from "node:timers/promises";
import type { ClientState, LoadIo } from "./client.js";
import type { VerifyReport } from "./model.js";

/** Bounds of verifyLoad (ms). */
export interface VerifyOptions {
  /** How long jobs are polled for a terminal state, all jobs together (default 60 s). */
  jobTimeoutMs?: number;
  /** How long each key's usage may take to settle (default 20 s). */
  billingSettleMs?: number;
}

/**
 * Checks the ledger against the server (bounded: each call within the request bound, jobs
 * polled for `jobTimeoutMs`): every acknowledged save's version is in its document's history
 * and the document holds the last acknowledged (or a later attempted) save; every uploaded
 * document is there with its text; every job reached a terminal state; each key's monthly
 * usage equals what its acknowledged turns charged (once each), waiting up to `billingSettleMs`
 * (default 20 s) for holds of failed turns to be released.
 */
export async function verifyLoad(
  io: LoadIo,
  clients: readonly ClientState[],
  setupOps: ReadonlyMap<number, number>,
  opts: VerifyOptions = {},
): Promise<VerifyReport> {
  const problems: string[] = [];
  const jobStatuses: Record<string, number> = {};
  const deadline = Date.now() + (opts.jobTimeoutMs ?? 60_000);
  let billingUnverifiable = 0;
  const json = async (key: string, path: string) => {
    const a = await io.send(key, "GET", path);
    return { status: a.status, body: (a.text ? JSON.parse(a.text) : {}) as Record<string, unknown> };
  };

  for (const c of clients) {
    // Saves: every acknowledged version is in the history; the head holds the last write.
    const saves = io.ledger.saves.filter((s) => s.client === c.index);
    if (saves.length > 0) {
      const versions = await json(c.key, `/v1/documents/${c.save.documentId}/versions?limit=200`);
      const ids = new Set(
        ((versions.body.versions as { version_id: string }[] | undefined) ?? []).map((v) => v.version_id),
      );
      const total = (versions.body.total as number | undefined) ?? ids.size;
      const missing = saves.filter((s) => !ids.has(s.versionId));
      // Over 200 versions only the newest are listed: older acknowledged ones are checked one by one.
      for (const s of missing) {
        const one =
          total > ids.size ? await json(c.key, `/v1/documents/${c.save.documentId}/versions/${s.versionId}`) : null;
        if (one?.status !== 200)
          problems.push(
            `client ${c.index}: acknowledged save ${s.marker} (version ${s.versionId}) is not in the history`,
          );
      }
      const head = await json(c.key, `/v1/documents/${c.save.documentId}?include_html=true`);
      const html = String(head.body.html ?? "");
      const last = saves.reduce((a, b) => (b.at > a.at ? b : a));
      const lastN = Number(last.marker.split("-s")[1]);
      const m = /marker c\d+-s(\d+)/.exec(html);
      if (!m || Number(m[1]) < lastN)
        problems.push(
          `client ${c.index}: document holds ${m?.[0] ?? "no marker"}, last acknowledged save was ${last.marker}`,
        );
    }
    // Sync chats: each acknowledged change's version is in the chat document's history.
    const chats = io.ledger.syncChats.filter((s) => s.client === c.index && s.versionId);
    if (chats.length > 0) {
      const versions = await json(c.key, `/v1/documents/${c.chat.documentId}/versions?limit=200`);
      const ids = new Set(
        ((versions.body.versions as { version_id: string }[] | undefined) ?? []).map((v) => v.version_id),
      );
      for (const s of chats) {
        if (ids.has(s.versionId as string)) continue;
        const one = await json(c.key, `/v1/documents/${c.chat.documentId}/versions/${s.versionId}`);
        if (one.status !== 200)
          problems.push(`client ${c.index}: acknowledged chat edit (version ${s.versionId}) is not in the history`);
      }
    }
    // Uploads: each acknowledged document is there with its text.
    for (const u of io.ledger.uploads.filter((x) => x.client === c.index)) {
      const doc = await json(c.key, `/v1/documents/${u.documentId}?include_html=true`);
      if (doc.status !== 200 || !String(doc.body.html ?? "").includes(u.marker))
        problems.push(
          `client ${c.index}: acknowledged ${u.kind} ${u.marker} → ${doc.status}, text ${doc.status === 200 ? "missing" : "unread"}`,
        );
    }
    // Jobs: terminal, and what each completed one charged.
    let jobOps = 0;
    for (const j of io.ledger.jobs.filter((x) => x.client === c.index)) {
      let job: Record<string, unknown> | null = null;
      for (;;) {
        const got = await json(c.key, `/v1/jobs/${j.jobId}`).catch(() => null);
        if (got?.status === 200 && ["completed", "failed", "cancelled"].includes(String(got.body.status))) {
          job = got.body;
          break;
        }
        if (Date.now() > deadline) {
          problems.push(
            `client ${c.index}: job ${j.jobId} not terminal (last: ${got ? `${got.status} ${got.body.status}` : "no answer"})`,
          );
          break;
        }
        await sleep(250);
      }
      if (!job) continue;
      jobStatuses[String(job.status)] = (jobStatuses[String(job.status)] ?? 0) + 1;
      const usage = (job.result as { usage?: { ops_charged?: number } } | undefined)?.usage;
      jobOps += usage?.ops_charged ?? 0;
    }
    // Billing: the month's operations are the sum of what the acknowledged turns charged.
    const syncOps = io.ledger.syncChats.filter((s) => s.client === c.index).reduce((sum, s) => sum + s.opsCharged, 0);
    const setupCharged = setupOps.get(c.index) ?? 0;
    const expected = syncOps + setupCharged + jobOps;
    // A failed turn's hold may still be on its way back (released in the background): wait a little.
    const settleBy = Date.now() + (opts.billingSettleMs ?? 20_000);
    let usage = await json(c.key, "/v1/usage");
    while (usage.status === 200 && Number(usage.body.monthly_used) !== expected && Date.now() < settleBy) {
      await sleep(500);
      usage = await json(c.key, "/v1/usage");
    }
    const used = Number(usage.body.monthly_used);
    if (usage.status !== 200) problems.push(`client ${c.index}: GET /v1/usage → ${usage.status}`);
    else if (used !== expected) {
      if (c.unknownBillable) billingUnverifiable++;
      else {
        // Which way it went: holds never released, or settled charges no answer owned up to.
        const charges = (usage.body.recent_charges as { state: string; ops: number }[] | undefined) ?? [];
        const held = charges.filter((ch) => ch.state === "reserved").length;
        const failedTurns = io.records.filter(
          (r) => r.client === c.index && (r.kind === "sync_chat" || r.kind === "async_chat") && !r.acknowledged,
        );
        problems.push(
          `client ${c.index}: monthly_used ${used}, the acknowledged turns charged ${expected} ` +
            `(${held} holds still reserved; unacknowledged turns: ${failedTurns.map((r) => `${r.kind} ${r.status}`).join(", ") || "none"})`,
        );
      }
    }
  }
  return {
    problems,
    checked: {
      saves: io.ledger.saves.length,
      syncChats: io.ledger.syncChats.length,
      jobs: io.ledger.jobs.length,
      uploads: io.ledger.uploads.length,
      keys: clients.length,
    },
    billingUnverifiable,
    jobStatuses,
  };
}
