// Exactly-once enqueue of webhook deliveries: a durable JetStream consumer per event stream (job
// lifecycle, document events) shared by every sessions replica; each message becomes one delivery
// row per subscribed endpoint of its owner, under the unique (endpoint_id, event_id) key, and is
// acked only after that insert committed. A crash before the ack redelivers the message and the
// key makes the second insert a no-op, so every event is enqueued once per endpoint.
import { randomBytes } from "node:crypto";
import {
  DOCUMENT_EVENTS_STREAM,
  DOCUMENT_EVENTS_SUBJECTS,
  DocumentEventSchema,
  documentEventSubject,
  JOB_LIFECYCLE_STREAM,
  JOB_LIFECYCLE_SUBJECTS,
  JobLifecycleEventSchema,
} from "@redline/event-contracts";
import {
  type Consumer,
  ensureDurableConsumer,
  ensureStream,
  type JsMsg,
  type Knex,
  type Logger,
  type NatsConnection,
} from "@redline/service-kit";
import { insertDeliveries, subscribedEndpoints } from "../db/store/webhooks.js";
import { documentWebhookEvent, jobWebhookEvent, type WebhookEvent } from "./events.js";
import { countEnqueued } from "./metrics.js";

/** Messages one fetch takes, and how long it waits for the first (ms). */
const FETCH = { max_messages: 100, expires: 1000 };
/** Delay before a message whose enqueue failed (Postgres down) comes back (ms). */
const RETRY_NAK_MS = 2000;

/** One stream the enqueuer reads: its consumer's suffix and filter, and how a message becomes an event. */
interface Source {
  stream: string;
  subjects: string[];
  suffix: string;
  filter: string;
  toEvent(msg: JsMsg): WebhookEvent;
}

const SOURCES: Source[] = [
  {
    stream: JOB_LIFECYCLE_STREAM,
    subjects: JOB_LIFECYCLE_SUBJECTS,
    suffix: "jobs",
    filter: JOB_LIFECYCLE_SUBJECTS[0],
    toEvent: (m) => jobWebhookEvent(JobLifecycleEventSchema.parse(m.json()), messageIdOf(m)),
  },
  {
    stream: DOCUMENT_EVENTS_STREAM,
    subjects: DOCUMENT_EVENTS_SUBJECTS,
    suffix: "documents",
    filter: documentEventSubject("document_updated", "*"),
    toEvent: (m) => documentWebhookEvent(DocumentEventSchema.parse(m.json()), messageIdOf(m)),
  },
];

/** The publisher's message id (event-contracts *MessageId), the event's identity across redeliveries. */
function messageIdOf(m: JsMsg): string {
  const id = m.headers?.get("Nats-Msg-Id");
  if (!id) throw new Error(`message ${m.seq} on ${m.subject} has no Nats-Msg-Id`);
  return id;
}

/** Enqueues one event for every subscribed endpoint of its owner; returns how many rows were new. */
export async function enqueueEvent(db: Knex, event: WebhookEvent): Promise<number> {
  const endpoints = await subscribedEndpoints(db, event.ownerId, event.type);
  return insertDeliveries(
    db,
    endpoints.map((e) => ({
      id: `msg_${randomBytes(12).toString("hex")}`,
      endpoint_id: e.id,
      owner_id: event.ownerId,
      event_id: event.eventId,
      event_type: event.type,
      body: event.body,
    })),
  );
}

/** Handles one message: enqueue, then ack; a malformed one is acked and logged (it can never succeed). */
async function handle(db: Knex, source: Source, m: JsMsg, log: Logger, kick: () => void): Promise<void> {
  let event: WebhookEvent;
  try {
    event = source.toEvent(m);
  } catch (err) {
    log.warn({ err, subject: m.subject, seq: m.seq }, "dropping a malformed event");
    m.ack();
    return;
  }
  try {
    const added = await enqueueEvent(db, event);
    m.ack();
    if (added > 0) {
      countEnqueued(event.type, added);
      kick();
    }
  } catch (err) {
    log.warn({ err, subject: m.subject }, "enqueueing webhook deliveries failed; the event comes back");
    m.nak(RETRY_NAK_MS);
  }
}

/** A running enqueuer; stop() ends its fetch loops after the messages in hand. */
export interface Enqueuer {
  stop(): Promise<void>;
}

/**
 * Ensures both streams and the durable consumers `<consumerPrefix>-jobs` and
 * `<consumerPrefix>-documents`, then reads them until stopped; `kick` is called after new rows
 * were enqueued (the delivery worker takes them at once).
 */
export async function startEnqueuer(
  db: Knex,
  nc: NatsConnection,
  consumerPrefix: string,
  log: Logger,
  kick: () => void,
): Promise<Enqueuer> {
  let stopped = false;
  const consumers: [Source, Consumer][] = [];
  for (const source of SOURCES) {
    await ensureStream(nc, source.stream, source.subjects);
    consumers.push([
      source,
      await ensureDurableConsumer(nc, source.stream, `${consumerPrefix}-${source.suffix}`, source.filter),
    ]);
  }
  const loops = consumers.map(async ([source, consumer]) => {
    while (!stopped) {
      try {
        const batch = await consumer.fetch(FETCH);
        for await (const m of batch) await handle(db, source, m, log, kick);
      } catch (err) {
        if (stopped) break;
        log.warn({ err, stream: source.stream }, "webhook event fetch failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
