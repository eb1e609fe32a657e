// The gateway's job-event feed (services/gateway/src/job-events.ts) on a real nats-server:
// streams of one job share one subscription and each hears every event once; a NATS restart
// tells every listener to refetch (what was published meanwhile never arrives live).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeJobEvent, type JobEvent, jobSubject } from "@redline/event-contracts";
import { createJobEventFeed, type JobEventFeed } from "@redline/gateway";
import { type EmbeddedNatsHandle, freePort, startNats } from "@redline/local-infra";
import { createLogger } from "@redline/service-kit";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dataDir: string;
let port: number;
let server: EmbeddedNatsHandle;
let publisher: NatsConnection;
let feed: JobEventFeed;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "job-feed-"));
  port = await freePort();
  server = await startNats({ dataDir, port });
  publisher = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  feed = createJobEventFeed(server.url, createLogger("job-feed-test", "silent"));
});

afterAll(async () => {
  await feed?.close();
  await publisher?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function event(sequence: number): JobEvent {
  return {
    sequence,
    type: "intermediate",
    data: { content: `step ${sequence}` },
    created_at: new Date().toISOString(),
  };
}

/** A listener that records what it hears. */
function recorder() {
  const events: number[] = [];
  let reconnects = 0;
  return {
    events,
    get reconnects() {
      return reconnects;
    },
    onEvent: (e: JobEvent) => events.push(e.sequence),
    onReconnect: () => {
      reconnects++;
    },
  };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("job-event feed", () => {
  it("delivers each event once to every stream of the job, and nothing of other jobs", async () => {
    const [a, b, other] = [recorder(), recorder(), recorder()];
    const offA = await feed.subscribe("job-shared", a);
    const offB = await feed.subscribe("job-shared", b);
    const offOther = await feed.subscribe("job-other", other);
    expect(feed.subscriptions).toBe(3);
    await publisher.flush();
    publisher.publish(jobSubject("job-shared"), encodeJobEvent(event(1)));
    publisher.publish(jobSubject("job-shared"), encodeJobEvent(event(2)));
    await until("both streams heard both events", () => a.events.length === 2 && b.events.length === 2);
    expect(a.events).toEqual([1, 2]);
    expect(b.events).toEqual([1, 2]);
    expect(other.events).toEqual([]);

    // One stream leaves: the other keeps hearing the job through the shared subscription.
    offA();
    offA(); // idempotent
    expect(feed.subscriptions).toBe(2);
    publisher.publish(jobSubject("job-shared"), encodeJobEvent(event(3)));
    await until("the remaining stream heard event 3", () => b.events.length === 3);
    expect(a.events).toEqual([1, 2]);

    // The last stream leaves, a new one arrives: a fresh subscription hears only later events.
    offB();
    const c = recorder();
    const offC = await feed.subscribe("job-shared", c);
    await publisher.flush();
    publisher.publish(jobSubject("job-shared"), encodeJobEvent(event(4)));
    await until("the new stream heard event 4", () => c.events.length === 1);
    expect(c.events).toEqual([4]);
    expect(b.events).toEqual([1, 2, 3]);
    offC();
    offOther();
    expect(feed.subscriptions).toBe(0);
  });

  it("tells every listener to refetch when NATS comes back, then delivers live again", async () => {
    const [a, b] = [recorder(), recorder()];
    const offA = await feed.subscribe("job-restart", a);
    const offB = await feed.subscribe("job-restart-2", b);
    expect(feed.live).toBe(true);
    await server.stop();
    await until("the feed noticed NATS is down", () => !feed.live);
    server = await startNats({ dataDir, port });
    await until("the feed reconnected", () => feed.live, 20_000);
    await until("both listeners were told to refetch", () => a.reconnects === 1 && b.reconnects === 1);
    await until("the publisher reconnected", () => !publisher.isClosed() && publisher.info !== undefined, 20_000);
    // The subscription survives the restart (the client re-subscribes): events flow live again.
    for (let i = 0; i < 50 && a.events.length === 0; i++) {
      publisher.publish(jobSubject("job-restart"), encodeJobEvent(event(10 + i)));
      await publisher.flush().catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(a.events.length).toBeGreaterThan(0);
    expect(b.events).toEqual([]);
    offA();
    offB();
  });
});
