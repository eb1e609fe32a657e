// Live job events for progress streams: one NATS connection per gateway, opened on the first
// stream, with one subscription per streamed job on redline.jobs.v1.<job_id>. Postgres (through
// the agent's GetJobEvents) stays the record: a stream replays from it and fills any gap.
import { decodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import {
  connectNats,
  type Logger,
  type NatsConnection,
  natsTraceparent,
  SpanKind,
  withSpan,
} from "@redline/service-kit";

/** One event as the agent publishes it. */
export type WireJobEvent = JobEvent;

/** What a stream hears from the feed: each live event, and a NATS reconnect (events may have been missed). */
export interface JobEventListener {
  onEvent(event: WireJobEvent): void;
  /** The connection came back: anything published meanwhile was not delivered, so refetch. */
  onReconnect(): void;
}

/** Subscriptions to job events. */
export interface JobEventFeed {
  /** True when events arrive live; false (no NATS, or NATS unreachable now) means streams must poll the agent. */
  readonly live: boolean;
  /** Listeners (one per open progress stream) subscribed now; a stream that ended must have dropped its own. */
  readonly subscriptions: number;
  /** Calls the listener for each event of the job published from now on; resolves to an unsubscribe. */
  subscribe(jobId: string, listener: JobEventListener): Promise<() => void>;
  close(): Promise<void>;
}

/**
 * A feed over NATS at `natsUrl`; without a URL, a feed that never delivers (streams poll). Streams
 * of one job share one NATS subscription (a browser tab per reviewer on the same job is common),
 * so the server sends each event once per gateway, not once per stream.
 */
export function createJobEventFeed(natsUrl: string | undefined, log: Logger): JobEventFeed {
  let conn: Promise<NatsConnection> | undefined;
  // While NATS is unreachable no live event comes: streams then refetch at the polling pace.
  let connected = true;
  const jobs = new Map<string, { listeners: Set<JobEventListener>; close(): void }>();
  let subscriptions = 0;
  const watch = (nc: NatsConnection) => {
    void (async () => {
      for await (const status of nc.status()) {
        // nats' Events enum values, as strings (the gateway does not depend on nats itself).
        const type = String(status.type);
        if (type === "disconnect") connected = false;
        else if (type === "reconnect") {
          connected = true;
          for (const job of jobs.values()) for (const l of job.listeners) l.onReconnect();
        }
      }
    })().catch(() => {});
  };
  const connection = () => {
    conn ??= connectNats(natsUrl as string, "gateway").then((nc) => {
      connected = true;
      watch(nc);
      return nc;
    });
    conn.catch(() => {
      conn = undefined;
      connected = false;
    });
    return conn;
  };
  /** The job's shared NATS subscription, opened on its first listener. */
  const openJob = (nc: NatsConnection, jobId: string) => {
    const listeners = new Set<JobEventListener>();
    const sub = nc.subscribe(jobSubject(jobId));
    void (async () => {
      for await (const msg of sub) {
        const deliver = async () => {
          let event: WireJobEvent;
          try {
            event = decodeJobEvent(msg.data);
          } catch (err) {
            log.warn({ err, jobId }, "undecodable job event");
            return;
          }
          for (const l of listeners) l.onEvent(event);
        };
        // An event published inside a job run carries its traceparent: its delivery to the
        // streams joins the job's trace (awaited in turn, so events keep their order).
        const traceparent = natsTraceparent(msg.headers);
        if (!traceparent) await deliver();
        else
          await withSpan(
            // The subject's template: a job id in the name would make every span name unique.
            "redline.jobs.v1.{job_id} receive",
            {
              kind: SpanKind.CONSUMER,
              traceparent,
              attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject },
            },
            deliver,
          );
      }
    })();
    const job = { listeners, close: () => sub.unsubscribe() };
    jobs.set(jobId, job);
    return job;
  };
  return {
    get live() {
      return natsUrl !== undefined && connected;
    },
    get subscriptions() {
      return subscriptions;
    },
    async subscribe(jobId, listener) {
      if (!natsUrl) return () => {};
      const nc = await connection();
      const job = jobs.get(jobId) ?? openJob(nc, jobId);
      job.listeners.add(listener);
      subscriptions++;
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        subscriptions--;
        job.listeners.delete(listener);
        if (job.listeners.size === 0 && jobs.get(jobId) === job) {
          jobs.delete(jobId);
          job.close();
        }
      };
    },
    async close() {
      if (!conn) return;
      const nc = await conn.catch(() => undefined);
      await nc?.drain().catch(() => {});
    },
  };
}
