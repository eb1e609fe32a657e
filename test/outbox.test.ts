// Document events: every commit writes an outbox row in its own transaction, and the relay
// publishes it to JetStream with the event id as message id, in commit order.
import { DOCUMENT_EVENTS_STREAM, documentEventMessageId, documentEventSubject } from "@redline/event-contracts";
import { AckPolicy, connect, DeliverPolicy, type JsMsg } from "nats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "outbox" }, "olga"));
});
afterAll(() => stack?.close());

describe("outbox relay", () => {
  it("publishes one event per commit, in order, with the outbox id as message id", async () => {
    const first = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'replace "Acme" with "Zenith"', document_html: sampleContract() },
    });
    const body = (await first.json()) as {
      session_id: string;
      document_changes: { document_id: string; version_id: string };
    };
    const second = await stack.call("POST", "/v1/chat", {
      key,
      body: { session_id: body.session_id, message: 'make "Zenith" italic' },
    });
    const secondBody = (await second.json()) as { document_changes: { version_id: string } };
    const documentId = body.document_changes.document_id;

    // Postgres is the record: create + edit + edit, ids increasing.
    const rows = await stack.documentsDb("documents.outbox").where({ document_id: documentId }).orderBy("id");
    expect(rows.map((r: { event_type: string }) => r.event_type)).toEqual([
      "document_created",
      "document_updated",
      "document_updated",
    ]);
    expect(rows.at(-1).version_id).toBe(secondBody.document_changes.version_id);

    // NATS fans out: the same events arrive on JetStream, deduplicated by message id.
    const nc = await connect({ servers: inject("infra").natsUrl });
    try {
      const js = nc.jetstream();
      const deadline = Date.now() + 10_000;
      const seen: { id: number; type: string; msgId: string | undefined }[] = [];
      // Other test files share this NATS: read only this owner's subject (filter_subject, as
      // nats-server 2.9 has no filter_subjects).
      const owner = (await stack.accounts.resolveApiKey({ apiKey: key })).principal?.ownerId ?? "";
      const jsm = await nc.jetstreamManager();
      const info = await jsm.consumers.add(DOCUMENT_EVENTS_STREAM, {
        filter_subject: documentEventSubject("*", owner),
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.All,
        inactive_threshold: 60e9,
      });
      const consumer = await js.consumers.get(DOCUMENT_EVENTS_STREAM, info.name);
      while (
        seen.filter((e) => rows.some((r: { id: string }) => Number(r.id) === e.id)).length < rows.length &&
        Date.now() < deadline
      ) {
        const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
        for await (const m of batch as AsyncIterable<JsMsg>) {
          const event = m.json<{ id: number; type: string; document_id: string }>();
          if (event.document_id === documentId)
            seen.push({ id: event.id, type: event.type, msgId: m.headers?.get("Nats-Msg-Id") });
        }
      }
      expect(seen.map((e) => e.id)).toEqual(rows.map((r: { id: string }) => Number(r.id)));
      expect(seen.map((e) => e.msgId)).toEqual(
        rows.map((r: { id: string; document_id: string }) => documentEventMessageId(r)),
      );
      const published = await stack
        .documentsDb("documents.outbox")
        .where({ document_id: documentId })
        .whereNull("published_at");
      expect(published).toEqual([]);
    } finally {
      await nc.close();
    }
  });
});
