// NATS with JetStream: Postgres is the record, NATS fans out. Publishers set the event id as
// the message id so a relay that publishes twice stores the event once.
import {
  AckPolicy,
  type Consumer,
  connect,
  DeliverPolicy,
  headers,
  type JetStreamClient,
  type JsMsg,
  type MsgHdrs,
  type NatsConnection,
  RetentionPolicy,
} from "nats";
import { type TraceContext, traceHeaders, tracingEnabled } from "./tracing.js";

export type { Consumer, JsMsg, NatsConnection };

/** Connects with unlimited reconnects so a NATS restart does not take the service down. */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
}

/** Creates or updates a stream (limits retention, 7 days, 2-minute duplicate window). */
export async function ensureStream(nc: NatsConnection, name: string, subjects: string[]): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const config = {
    name,
    subjects,
    retention: RetentionPolicy.Limits,
    max_age: 7 * 24 * 3600 * 1e9,
    duplicate_window: 120 * 1e9,
  };
  try {
    await jsm.streams.info(name);
    await jsm.streams.update(name, config);
  } catch {
    await jsm.streams.add(config);
  }
}

/**
 * The durable pull consumer `name` on `stream` (created when missing: explicit acks, only
 * messages published from its creation on, `filterSubject`), for a worker group that shares the
 * work: every process using the same name takes a disjoint part, and an unacked message comes
 * back after `ackWaitMs`.
 */
export async function ensureDurableConsumer(
  nc: NatsConnection,
  stream: string,
  name: string,
  filterSubject: string,
  ackWaitMs = 30_000,
): Promise<Consumer> {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.consumers.info(stream, name);
  } catch {
    await jsm.consumers.add(stream, {
      durable_name: name,
      filter_subject: filterSubject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      ack_wait: ackWaitMs * 1e6,
    });
  }
  return nc.jetstream().consumers.get(stream, name);
}

/** Publishes JSON to JetStream with `msgId` for deduplication and `trace`'s traceparent in its headers; resolves on the server's ack. */
export async function publishJson(
  js: JetStreamClient,
  subject: string,
  msgId: string,
  data: unknown,
  trace?: TraceContext,
): Promise<void> {
  const h = headers();
  h.set("Content-Type", "application/json");
  for (const [k, v] of Object.entries(traceHeaders(trace))) h.set(k, v);
  await js.publish(subject, new TextEncoder().encode(JSON.stringify(data)), { msgID: msgId, headers: h });
}

/**
 * Headers carrying `trace`'s traceparent for a core NATS publish; undefined when tracing is off
 * or there is no span, so untraced messages stay header-free.
 */
export function natsTraceHeaders(trace: TraceContext | undefined): MsgHdrs | undefined {
  if (!tracingEnabled()) return undefined;
  const entries = Object.entries(traceHeaders(trace));
  if (entries.length === 0) return undefined;
  const h = headers();
  for (const [k, v] of entries) h.set(k, v);
  return h;
}

/**
 * Headers carrying a stored W3C `traceparent` (a row's, for work published outside the span that
 * created it); undefined when tracing is off or there is none.
 */
export function natsTraceparentHeaders(traceparent: string | null | undefined): MsgHdrs | undefined {
  if (!tracingEnabled() || !traceparent) return undefined;
  const h = headers();
  h.set("traceparent", traceparent);
  return h;
}

/** The traceparent a received message carries, for continuing its trace (undefined without). */
export function natsTraceparent(h: MsgHdrs | undefined): string | undefined {
  return tracingEnabled() ? h?.get("traceparent") || undefined : undefined;
}

/** Health probe: a round trip to the server. */
export async function pingNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error("nats connection closed");
  await nc.flush();
}
