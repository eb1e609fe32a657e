// Publishes committed outbox rows to NATS JetStream. Postgres is the record: a row is marked
// published only after JetStream acked it, and the event id is the message id, so a relay that
// crashes between publish and mark publishes again without duplicating the event.
import {
  DOCUMENT_EVENTS_STREAM,
  DOCUMENT_EVENTS_SUBJECTS,
  type DocumentEvent,
  documentEventMessageId,
  documentEventSubject,
} from "@redline/event-contracts";
import {
  ensureStream,
  type Knex,
  type Logger,
  type NatsConnection,
  publishJson,
  SpanKind,
  withSpan,
} from "@redline/service-kit";
import { markPublished, unpublishedEvents } from "../db/store/outbox.js";

const BATCH = 200;
const IDLE_POLL_MS = 250;

/** A running relay: `kick()` asks for an immediate pass (after a commit); `stop()` ends it. */
export interface OutboxRelay {
  kick(): void;
  stop(): Promise<void>;
}

/** Starts the relay loop; a failing pass (NATS down) is retried on the next tick. */
export async function startOutboxRelay(db: Knex, nc: NatsConnection, log: Logger): Promise<OutboxRelay> {
  await ensureStream(nc, DOCUMENT_EVENTS_STREAM, DOCUMENT_EVENTS_SUBJECTS);
  const js = nc.jetstream();
  let stopped = false;
  let wake: (() => void) | null = null;
  let running: Promise<void> = Promise.resolve();

  async function pass(): Promise<number> {
    const rows = await unpublishedEvents(db, BATCH);
    for (const row of rows) {
      const event: DocumentEvent = {
        id: Number(row.id),
        type: row.event_type,
        owner_id: row.owner_id,
        document_id: row.document_id,
        version_id: row.version_id,
        session_id: row.session_id,
        payload: row.payload,
        created_at: new Date(row.created_at).toISOString(),
      };
      const subject = documentEventSubject(row.event_type, row.owner_id);
      // A producer span in the trace of the write that appended the row (its stored traceparent):
      // publishJson then puts this span's traceparent into the message headers for consumers.
      // The span name uses the subject's template (OTel messaging conventions: bounded names); the
      // subject itself is an attribute.
      await withSpan(
        `redline.documents.v1.${row.event_type}.{owner_id} publish`,
        {
          kind: SpanKind.PRODUCER,
          traceparent: row.traceparent,
          attributes: { "messaging.system": "nats", "messaging.destination.name": subject },
        },
        (_span, trace) => publishJson(js, subject, documentEventMessageId(row), event, trace),
      );
    }
    if (rows.length > 0)
      await markPublished(
        db,
        rows.map((r) => r.id),
      );
    return rows.length;
  }

  async function loop() {
    while (!stopped) {
      let published = 0;
      try {
        published = await pass();
      } catch (err) {
        log.warn({ err }, "outbox relay pass failed; retrying");
      }
      if (published === BATCH) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, IDLE_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }
  running = loop();
  return {
    kick: () => wake?.(),
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}
