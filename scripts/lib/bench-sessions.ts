import { randomUUID } from "node:crypto";
import { quantile } from "@redline/local-stack";
import type { TestStack } from "../../test/support/stack.js";

import type { BenchResult } from "./bench-ingest.js";
import { principalOf } from "./bench-support.js";

/** (c): sessions list throughput through the gateway vs the same queries straight to Postgres. */
export async function benchSessions(results: BenchResult[], stack: TestStack, key: string) {
  const principal = await principalOf(stack, key);
  for (let i = 0; i < 30; i++) {
    await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'show section "x"', document_html: `<h1>Doc ${i}</h1><p>Body ${i}</p>` },
    });
  }
  const db = stack.sessionsDb;
  const direct = async () => {
    const rows = await db("sessions.sessions")
      .where({ owner_id: principal.ownerId })
      .orderBy("updated_at", "desc")
      .limit(50);
    const ids = rows.map((r: { id: string }) => r.id);
    await Promise.all([
      db("sessions.messages")
        .select("session_id")
        .count("* as count")
        .whereIn("session_id", ids)
        .andWhere({ active: true })
        .groupBy("session_id"),
      db("sessions.roster").whereIn("session_id", ids).whereNull("closed_at"),
    ]);
  };
  const viaGateway = async () => {
    const res = await stack.call("GET", "/v1/sessions", { key });
    if (res.status !== 200) throw new Error(`GET /v1/sessions → ${res.status}`);
    await res.arrayBuffer();
  };
  const throughput = async (fn: () => Promise<void>) => {
    const total = 600;
    const concurrency = 8;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          next++;
          await fn();
        }
      }),
    );
    return total / ((performance.now() - started) / 1000);
  };
  await throughput(direct);
  await throughput(viaGateway);
  const pg = await throughput(direct);
  const gw = await throughput(viaGateway);
  results.push({
    name: `(c) GET /v1/sessions: gateway+gRPC ${gw.toFixed(0)} req/s, Postgres directly ${pg.toFixed(0)} req/s`,
    value: `ratio ${(gw / pg).toFixed(2)}`,
  });
}

/** POSTs JSON through the gateway and parses the answer (bench helpers for (d) and (e)). */
async function postJson(stack: TestStack, key: string, path: string, body?: unknown) {
  const res = await stack.call("POST", path, { key, body });
  if (res.status !== 200) throw new Error(`POST ${path} → ${res.status} ${await res.text()}`);
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the API under benchmark
  return (await res.json()) as Record<string, any>;
}

/** One paragraph chunk's HTML with its text replaced (the chunk keeps its id). */
function withChunkText(html: string, chunkId: string, text: string): string {
  return html
    .split("\n")
    .map((part) => (part.includes(`data-chunk-id="${chunkId}"`) ? `<p data-chunk-id="${chunkId}">${text}</p>` : part))
    .join("\n");
}

/** A new session with one document of `paragraphs` paragraphs saved: ids, the save's reply, its first chunk. */
async function seedDocument(stack: TestStack, key: string, paragraphs: number) {
  const html = Array.from({ length: paragraphs }, (_, i) => `<p>Paragraph ${i}</p>`).join("");
  const sid = (await postJson(stack, key, "/v1/sessions/init")).session_id as string;
  const slot = (await postJson(stack, key, `/v1/sessions/${sid}/documents/blank`)).document.document_id as string;
  const saved = await postJson(stack, key, `/v1/sessions/${sid}/documents/${slot}/save`, { html });
  const chunkId: string = /data-chunk-id="([^"]+)"/.exec(saved.html)?.[1] ?? "";
  return { sid, slot, saved, documentId: saved.durable_document_id as string, chunkId };
}

/**
 * (d): doc-event visibility. After each save in one session returns, all 50 other sessions poll
 * GET doc-events at once from their cursors; latency from sending the save to each poller's
 * answer carrying the event, p50 and p99, and how many of the polls already saw it (the outbox
 * row commits with the save, so every poll issued after the ack must).
 */
export async function benchDocEvents(results: BenchResult[], stack: TestStack, key: string) {
  const POLLERS = 50;
  const COMMITS = 20;
  const seeded = await seedDocument(stack, key, 20);
  const { sid: writer, slot, documentId, chunkId } = seeded;
  let saved = seeded.saved;
  const pollers: { sid: string; cursor: number }[] = [];
  for (let i = 0; i < POLLERS; i++) {
    pollers.push({
      sid: (await postJson(stack, key, "/v1/sessions/init", { document_ids: [documentId] })).session_id,
      cursor: 0,
    });
  }
  const poll = async (p: { sid: string; cursor: number }) => {
    const res = await stack.call("GET", `/v1/sessions/${p.sid}/doc-events?after_id=${p.cursor}`, { key });
    const page = (await res.json()) as { events: { version_id: string }[]; last_id: number };
    p.cursor = page.last_id;
    return page.events.map((e) => e.version_id);
  };
  await Promise.all(pollers.map(poll));
  const single: number[] = [];
  const fanOut: number[] = [];
  let seen = 0;
  for (let i = 0; i < COMMITS; i++) {
    const started = performance.now();
    saved = await postJson(stack, key, `/v1/sessions/${writer}/documents/${slot}/save`, {
      html: withChunkText(saved.html, chunkId, `Edit ${i}`),
      base_version_id: saved.version_id,
    });
    const version = saved.version_id as string;
    if (i % 2 === 0) {
      // One poller alone: the floor of commit → visible.
      if ((await poll(pollers[0])).includes(version)) seen++;
      single.push(performance.now() - started);
      await Promise.all(pollers.slice(1).map(poll));
    } else {
      await Promise.all(
        pollers.map(async (p) => {
          if ((await poll(p)).includes(version)) seen++;
          fanOut.push(performance.now() - started);
        }),
      );
    }
  }
  const polls = single.length + fanOut.length;
  results.push({
    name: `(d) doc-event visibility, save sent → event in a poll issued after the save's ack (${seen} of ${polls} polls saw it): one poller, and 50 pollers at once`,
    value: `one: p50 ${quantile(single, 0.5).toFixed(1)} ms, p99 ${quantile(single, 0.99).toFixed(1)} ms; 50: p50 ${quantile(fanOut, 0.5).toFixed(1)} ms, p99 ${quantile(fanOut, 0.99).toFixed(1)} ms`,
  });
}

/**
 * (e): human saves per second (one chunk changed, through gateway, sessions and documents) vs a
 * plain Postgres transaction writing the same rows (close one revision, insert one revision,
 * a version, the head update and an outbox event), both sequential.
 */
export async function benchSaves(results: BenchResult[], stack: TestStack, key: string) {
  const ROUNDS = 150;
  const seeded = await seedDocument(stack, key, 50);
  const { sid, slot, documentId, chunkId } = seeded;
  let saved = seeded.saved;
  const viaService = async () => {
    const started = performance.now();
    for (let i = 0; i < ROUNDS; i++) {
      saved = await postJson(stack, key, `/v1/sessions/${sid}/documents/${slot}/save`, {
        html: withChunkText(saved.html, chunkId, `Save ${i} ${performance.now()}`),
        base_version_id: saved.version_id,
      });
    }
    return ROUNDS / ((performance.now() - started) / 1000);
  };
  const db = stack.documentsDb;
  const direct = async () => {
    const started = performance.now();
    for (let i = 0; i < ROUNDS; i++) {
      await db.transaction(async (trx) => {
        const doc = await trx("documents.documents").where({ id: documentId }).forUpdate().first();
        // The same outbox ordering lock every commit takes.
        await trx.raw("select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))");
        const seq = doc.head_seq + 1;
        const [live] = await trx("documents.chunk_revisions")
          .where({ document_id: documentId, chunk_id: chunkId })
          .whereNull("valid_to")
          .update({ valid_to: seq })
          .returning("*");
        await trx("documents.chunk_revisions").insert({
          ...live,
          html: `<p>Direct ${i}</p>`,
          valid_from: seq,
          valid_to: null,
        });
        const versionId = randomUUID();
        await trx("documents.versions").insert({
          id: versionId,
          document_id: documentId,
          seq,
          parent_id: doc.head_version_id,
          session_id: sid,
          kind: "edit",
          summary: "bench",
        });
        await trx("documents.documents")
          .where({ id: documentId })
          .update({ head_version_id: versionId, head_seq: seq, updated_at: trx.fn.now() });
        await trx("documents.outbox").insert({
          event_type: "document_updated",
          owner_id: doc.owner_id,
          document_id: documentId,
          version_id: versionId,
          session_id: sid,
          payload: JSON.stringify({ kind: "bench" }),
        });
      });
    }
    return ROUNDS / ((performance.now() - started) / 1000);
  };
  const service = await viaService();
  const pg = await direct();
  results.push({
    name: `(e) saves: gateway+sessions+documents ${service.toFixed(0)} saves/s, plain Postgres transaction of the same rows ${pg.toFixed(0)} tx/s`,
    value: `ratio ${(service / pg).toFixed(2)}`,
  });
}
