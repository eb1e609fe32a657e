// Live job events for progress streams: one NATS connection per gateway, opened on the first
// stream, with a subscription per streamed job on redline.jobs.v1.<job_id>. Postgres (through
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

/** Subscriptions to job events. */
export interface JobEventFeed {
  /** True when events arrive live; false (no NATS, or NATS unreachable now) means streams must poll the agent. */
  readonly live: boolean;
  /** NATS subscriptions open now (one per streamed job; a stream that ended must have dropped its own). */
  readonly subscriptions: number;
  /** Calls `onEvent` for each event of the job published from now on; resolves to an unsubscribe. */
  subscribe(jobId: string, onEvent: (event: WireJobEvent) => void): Promise<() => void>;
  close(): Promise<void>;
}

/** A feed over NATS at `natsUrl`; without a URL, a feed that never delivers (streams poll). */
export function createJobEventFeed(natsUrl: string | undefined, log: Logger): JobEventFeed {
  let conn: Promise<NatsConnection> | undefined;
  // While NATS is unreachable no live event comes: streams then refetch at the polling pace.
  let connected = true;
  const watch = (nc: NatsConnection) => {
    void (async () => {
      for await (const status of nc.status()) {
        // nats' Events enum values, as strings (the gateway does not depend on nats itself).
        const type = String(status.type);
        if (type === "disconnect") connected = false;
        else if (type === "reconnect") connected = true;
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
  let subscriptions = 0;
  return {
    get live() {
      return natsUrl !== undefined && connected;
    },
    get subscriptions() {
      return subscriptions;
    },
    async subscribe(jobId, onEvent) {
      if (!natsUrl) return () => {};
      const nc = await connection();
      const sub = nc.subscribe(jobSubject(jobId));
      subscriptions++;
      let open = true;
      void (async () => {
        for await (const msg of sub) {
          const deliver = async () => {
            try {
              onEvent(decodeJobEvent(msg.data));
            } catch (err) {
              log.warn({ err, jobId }, "undecodable job event");
            }
          };
          // An event published inside a job run carries its traceparent: its delivery to this
          // stream joins the job's trace (awaited in turn, so events keep their order).
          const traceparent = natsTraceparent(msg.headers);
          if (!traceparent) await deliver();
          else
            await withSpan(
              `${msg.subject} receive`,
              {
                kind: SpanKind.CONSUMER,
                traceparent,
                attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject },
              },
              deliver,
            );
        }
      })();
      return () => {
        if (!open) return;
        open = false;
        subscriptions--;
        sub.unsubscribe();
      };
    },
    async close() {
      if (!conn) return;
      const nc = await conn.catch(() => undefined);
      await nc?.drain().catch(() => {});
    },
  };
}
