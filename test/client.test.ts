// @redline/client on the real stack (issue #34 part 1): the committed OpenAPI document is what the
// gateway serves; uploads (base64 and pre-signed), sync chat, an async chat with approval streamed
// through streamJob across a dropped connection (resumed with Last-Event-ID: no gap, no repeat),
// approve/deny, cancel, exports to bytes with tracked changes, versions and usage; and 4xx answers
// as RedlineApiError with the spec's codes.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ChangeRecord,
  createRedlineClient,
  type JobStreamEvent,
  proposedChanges,
  RedlineApiError,
  type RedlineClient,
} from "@redline/client";
import { exportToFile, uploadPath } from "@redline/client/node";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import { ADD_SECTION } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

/** The gateway's JSON body cap here: small enough for a 413 from a modest upload. */
const MAX_MB = 2;

let stack: TestStack;
let key: string;
let client: RedlineClient;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "client", maxRequestMb: MAX_MB }, "client-carol"));
  client = createRedlineClient({ baseUrl: stack.url, apiKey: key, userAgent: "redline-client-test" });
});
afterAll(() => stack?.close());

/** One stream request the proxy saw: its Last-Event-ID header and whether it was cut. */
interface StreamRequest {
  lastEventId: string | undefined;
  cut: boolean;
}

/**
 * An HTTP proxy in front of the gateway that cuts the first progress-stream connection a few
 * bytes into its second event (the first complete, the second torn), as a network drop would.
 */
async function startDroppingProxy(
  target: string,
): Promise<{ url: string; streams: StreamRequest[]; close(): Promise<void> }> {
  const upstreamUrl = new URL(target);
  const streams: StreamRequest[] = [];
  const server: Server = createServer((req, res) => {
    const isStream = /\/stream\?/.test(req.url ?? "");
    const entry: StreamRequest | undefined = isStream
      ? { lastEventId: req.headers["last-event-id"] as string | undefined, cut: false }
      : undefined;
    if (entry) streams.push(entry);
    const cutThis = entry !== undefined && streams.length === 1;
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstreamUrl.host };
    const upstream = httpRequest(
      { host: upstreamUrl.hostname, port: upstreamUrl.port, path: req.url, method: req.method, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        if (!cutThis) {
          up.pipe(res);
          return;
        }
        let held = "";
        up.setEncoding("utf8");
        up.on("data", (chunk: string) => {
          if (entry.cut) return;
          held += chunk;
          const firstId = held.indexOf("id: ");
          const end = firstId < 0 ? -1 : held.indexOf("\n\n", firstId);
          if (end < 0 || held.length < end + 2 + 12) return;
          entry.cut = true;
          up.destroy();
          // Destroyed once the bytes are handed to the socket: destroy() alone would discard them.
          res.write(held.slice(0, end + 2 + 12), () => res.destroy());
        });
        up.on("end", () => res.end(held));
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function apiError(promise: Promise<unknown>): Promise<RedlineApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RedlineApiError);
  return err as RedlineApiError;
}

describe("the generated client", () => {
  it("was generated from the document the gateway serves", async () => {
    const served = await (await fetch(`${stack.url}/openapi.json`)).json();
    const committed = JSON.parse(readFileSync(join(REPO_ROOT, "packages/client/src/gen/openapi.json"), "utf8"));
    expect(served).toEqual(committed);
  });

  it("types any route through client.api with the key set", async () => {
    const { data, response } = await client.api.GET("/v1/documents", { params: { query: { limit: 5 } } });
    expect(response.status).toBe(200);
    expect(Array.isArray(data?.documents)).toBe(true);
  });
});

describe("uploads", () => {
  it("loads a .docx (base64) into a new session and answers its ids and HTML", async () => {
    const up = await uploadPath(client, join(REPO_ROOT, "test/fixtures/corpus/docx/tika-testWORD_various.docx"));
    expect(up.format).toBe("docx");
    expect(up.session_id).toBeTruthy();
    expect(up.durable_document_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(up.html).toContain("data-chunk-id");
    expect(up.roster?.some((r) => r.durable_document_id === up.durable_document_id)).toBe(true);
  });

  it("sends a file over the size threshold through the pre-signed flow, with the same answer", async () => {
    const data = new TextEncoder().encode("# Terms\n\nAcme pays within thirty days.\n");
    const [inline, presigned] = await Promise.all([
      client.upload({ filename: "terms.md", data }),
      client.upload({ filename: "terms.md", data: new Blob([data]) }, { presignAboveBytes: 0 }),
    ]);
    for (const up of [inline, presigned]) {
      expect(up.format).toBe("md");
      expect(up.html).toContain("Acme pays within thirty days.");
    }
    expect(presigned.session_id).not.toBe(inline.session_id);
    const converted = await client.upload({ filename: "terms.md", data }, { convertOnly: true });
    expect(converted.session_id).toBeUndefined();
    expect(converted.html).toContain("Acme pays");
  });

  it("turns refusals into RedlineApiError with the spec's status and code", async () => {
    const legacy = await apiError(client.upload({ filename: "old.doc", data: new Uint8Array([1, 2, 3]) }));
    expect(legacy.status).toBe(415);
    expect(String((legacy.body as { detail: string }).detail)).toContain(".docx");
    // Errors rule 5: over the application cap, error_code request_too_large.
    const big = new Uint8Array(MAX_MB * 1024 * 1024);
    const tooLarge = await apiError(client.upload({ filename: "big.txt", data: big }, { convertOnly: true }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.code).toBe("request_too_large");
    expect(tooLarge.body).toMatchObject({ error_code: "request_too_large", max_size_mb: MAX_MB });
  });
});

describe("chat, versions and usage", () => {
  it("edits an uploaded .md synchronously, then lists, diffs and restores its versions", async () => {
    const data = new TextEncoder().encode("# Terms\n\nAcme pays within thirty days.\n");
    const up = await client.upload({ filename: "terms.md", data });
    const res = await client.chat({ session_id: up.session_id, message: 'replace "Acme" with "Globex"' });
    expect(res.session_id).toBe(up.session_id);
    expect(res.document_changes?.chunk_diffs.some((c) => c.new_html.includes("Globex"))).toBe(true);
    expect(res.usage.ops_charged).toBe(1);

    const documentId = up.durable_document_id ?? "";
    const versions = await client.listVersions(documentId);
    expect(versions.total).toBe(2);
    const [latest, first] = versions.versions;
    const diff = await client.diffVersions(documentId, latest.version_id);
    expect(diff.against_version_id).toBe(first.version_id);
    expect(diff.changes.map((c) => [c.operation, c.old_html.includes("Acme"), c.new_html.includes("Globex")])).toEqual([
      ["edit", true, true],
    ]);

    const restored = await client.restoreVersion(documentId, first.version_id);
    expect(restored.kind).toBe("restore");
    expect((await client.listVersions(documentId)).total).toBe(3);
    const md = await client.exportDocument({ sessionId: up.session_id ?? "", format: "markdown" });
    expect(new TextDecoder().decode(md.bytes)).toBe("# Terms\n\nAcme pays within thirty days.\n");

    const usage = await client.usage();
    expect(usage.monthly_used).toBeGreaterThanOrEqual(1);
    expect(usage.recent_charges.length).toBeGreaterThanOrEqual(1);
  });

  it("refuses an empty message with a 400 RedlineApiError carrying the body and headers", async () => {
    const err = await apiError(client.chat({ message: "" }));
    expect(err.status).toBe(400);
    expect(typeof (err.body as { detail: unknown }).detail).toBe("string");
    expect(err.headers.get("content-type")).toContain("application/json");
  });
});

describe("async chat with approval, streamed", () => {
  it("streams across a dropped connection without gap or repeat; approve one, deny one; export docx", async () => {
    const proxy = await startDroppingProxy(stack.url);
    try {
      const viaProxy = createRedlineClient({ baseUrl: proxy.url, apiKey: key });
      const { jobId, job } = await viaProxy.chatAsync({
        message: ADD_SECTION,
        document_html: sampleContract(),
        approval_mode: "ask_every_time",
      });
      expect(job.status).toBe("pending");

      const events: JobStreamEvent[] = [];
      const proposals: ChangeRecord[] = [];
      const decisions: string[][] = [];
      for await (const event of viaProxy.streamJob(jobId, { reconnectDelayMs: 50 })) {
        events.push(event);
        if (event.event === "proposed_change") proposals.push(...proposedChanges(event));
        if (event.event === "proposed_change_batch") {
          expect(proposedChanges(event).map((c) => c.change_id)).toEqual(proposals.map((c) => c.change_id));
          const [keep, drop] = proposals;
          const approved = await client.approve(jobId, { changeIds: [keep.change_id] });
          const denied = await client.deny(jobId, { changeIds: [drop.change_id], feedback: "Not this paragraph" });
          decisions.push(approved.applied, denied.denied);
        }
      }

      // One cut connection, resumed after the last complete event.
      expect(proxy.streams.map((s) => s.cut)).toEqual([true, false]);
      expect(proxy.streams[0].lastEventId).toBeUndefined();
      expect(proxy.streams[1].lastEventId).toBe(events[0].id);
      // Every stored event exactly once, in order: the ids are the job's sequences 1..n.
      const ids = events.map((e) => Number(e.id));
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      const done = await client.getJob(jobId);
      const stored = (done.metadata.intermediate_responses ?? []) as { sequence: number }[];
      expect(stored.map((e) => e.sequence)).toEqual(ids);
      expect(events.map((e) => e.event).slice(-2)).toEqual(["final", "usage"]);

      expect(proposals).toHaveLength(2);
      expect(decisions).toEqual([[proposals[0].change_id], [proposals[1].change_id]]);
      expect(done.status).toBe("completed");

      // The approved heading is in the document as a Word insertion, the denied paragraph is not.
      const out = await client.exportDocument({ sessionId: done.session_id, format: "docx", trackChanges: true });
      expect(out.contentType).toContain("wordprocessingml");
      expect(out.filename).toMatch(/\.docx$/);
      expect(Array.isArray(out.warnings)).toBe(true);
      const xml = await (await JSZip.loadAsync(out.bytes)).file("word/document.xml")?.async("string");
      expect(xml).toMatch(/<w:ins\b[^>]*>(?:(?!<\/w:ins>).)*Liability/s);
      expect(xml).not.toContain("Liability is capped.");

      // Tracked changes need docx: 422 with the validation body's loc.
      const pdf = await apiError(
        client.exportDocument({ sessionId: done.session_id, format: "pdf", trackChanges: true }),
      );
      expect(pdf.status).toBe(422);
      expect((pdf.body as { detail: { loc: unknown[] }[] }).detail[0].loc).toEqual([
        "body",
        "options",
        "track_changes",
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("waits for a job through its stream, cancels a waiting one, and refuses a second cancel with 409", async () => {
    const plain = await client.chatAsync({
      message: 'make "thirty (30) days" italic',
      document_html: sampleContract(),
    });
    const seen: string[] = [];
    const finished = await client.waitForJob(plain.jobId, { onEvent: (e) => void seen.push(e.event) });
    expect(finished.status).toBe("completed");
    expect(seen.slice(-2)).toEqual(["final", "usage"]);

    const waiting = await client.chatAsync({
      message: ADD_SECTION,
      document_html: sampleContract(),
      approval_mode: "ask_every_time",
    });
    for await (const event of client.streamJob(waiting.jobId)) {
      if (event.event === "proposed_change_batch") break;
    }
    const cancelled = await client.cancel(waiting.jobId);
    expect(["stopped_here", "accepted"]).toContain(cancelled.stop_state);
    const again = await apiError(client.cancel(waiting.jobId));
    expect(again.status).toBe(409);
    const ended = await client.waitForJob(waiting.jobId);
    expect(ended.status).toBe("cancelled");
  });

  it("exports a stored document by its durable id alone, to a file", async () => {
    const up = await client.upload({ filename: "terms.md", data: new TextEncoder().encode("# T\n\nHello.\n") });
    const dir = mkdtempSync(join(tmpdir(), "redline-client-"));
    try {
      const out = join(dir, "nested", "t.txt");
      const file = await exportToFile(client, { documentId: up.durable_document_id ?? "", format: "txt" }, out);
      expect(file.path).toBe(out);
      expect(readFileSync(out, "utf8")).toContain("Hello.");
      expect(file.filename).toMatch(/\.txt$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
