// Webhook endpoints and the enqueue on the real test Postgres: the flag-off URL refusals, the
// per-account cap, owner scope, and the (endpoint, event) key that makes an enqueue exactly-once.
import { ConflictError, type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionsTestDb } from "../testing.js";
import { enqueueEvent } from "../webhooks/enqueue.js";
import { jobWebhookEvent } from "../webhooks/events.js";
import { createEndpoint, deleteEndpoint, getEndpoint, listDeliveries } from "./webhooks.js";

let db: Knex;
beforeAll(async () => {
  ({ db } = await sessionsTestDb("webhooks"));
});
afterAll(() => db?.destroy());

let n = 0;
const owner = () => `own_wh_${++n}_${Date.now()}`;
const strict = { allowPrivate: false, maxEndpoints: 3 };
const hook = (url: string) => ({ url, events: ["job.completed"], description: "" });

/** The SchemaError `fn` throws, or a failure. */
async function schemaError(fn: () => Promise<unknown>): Promise<SchemaError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SchemaError);
  return err as SchemaError;
}

describe("webhook endpoints", () => {
  it("refuses private, loopback, link-local and http targets when WEBHOOK_ALLOW_PRIVATE is off", async () => {
    const me = owner();
    for (const url of [
      "https://127.0.0.1/hook",
      "https://10.0.0.8/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hook",
      "https://[fd00:ec2::254]/hook",
      "https://100.64.0.1/hook",
      "https://localhost:8443/hook",
      "http://93.184.216.34/hook",
    ]) {
      const err = await schemaError(() => createEndpoint(db, strict, me, hook(url)));
      expect(err.detail).toEqual([{ type: "value_error", loc: ["body", "url"], msg: expect.any(String) }]);
    }
    const events = await schemaError(() =>
      createEndpoint(db, strict, me, { ...hook("https://93.184.216.34/"), events: ["job.completed", "nope"] }),
    );
    expect(events.detail).toEqual([{ type: "value_error", loc: ["body", "events", 1], msg: expect.any(String) }]);
    // A public literal address passes (nothing is sent at creation).
    const ok = await createEndpoint(db, strict, me, hook("https://93.184.216.34/hook"));
    expect(ok.secret).toMatch(/^whsec_/);
  });

  it("caps endpoints per owner with 409 and scopes reads and deletes to the owner", async () => {
    const me = owner();
    const loose = { allowPrivate: true, maxEndpoints: 2 };
    const first = await createEndpoint(db, loose, me, hook("http://127.0.0.1:9/a"));
    await createEndpoint(db, loose, me, hook("http://127.0.0.1:9/b"));
    await expect(createEndpoint(db, loose, me, hook("http://127.0.0.1:9/c"))).rejects.toBeInstanceOf(ConflictError);
    await expect(getEndpoint(db, owner(), first.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteEndpoint(db, owner(), first.id)).rejects.toBeInstanceOf(NotFoundError);
    await deleteEndpoint(db, me, first.id);
    await createEndpoint(db, loose, me, hook("http://127.0.0.1:9/c"));
  });

  it("enqueues an event once per subscribed endpoint of its owner, however often it arrives", async () => {
    const me = owner();
    const loose = { allowPrivate: true, maxEndpoints: 5 };
    const subscribed = await createEndpoint(db, loose, me, hook("http://127.0.0.1:9/jobs"));
    const elsewhere = await createEndpoint(db, loose, me, {
      ...hook("http://127.0.0.1:9/docs"),
      events: ["document.updated"],
    });
    const theirs = await createEndpoint(db, loose, owner(), hook("http://127.0.0.1:9/theirs"));
    const event = jobWebhookEvent(
      {
        id: 7,
        type: "job.completed",
        owner_id: me,
        job_id: "job_1",
        session_id: "s1",
        status: "completed",
        error: null,
        created_at: new Date().toISOString(),
      },
      "job-event-job_1-7",
    );
    expect(await enqueueEvent(db, event)).toBe(1);
    expect(await enqueueEvent(db, event)).toBe(0);
    expect(await listDeliveries(db, me, subscribed.id, 0)).toHaveLength(1);
    expect(await listDeliveries(db, me, elsewhere.id, 0)).toHaveLength(0);
    expect(await db("sessions.webhook_deliveries").where({ endpoint_id: theirs.id })).toHaveLength(0);
    const [delivery] = await listDeliveries(db, me, subscribed.id, 0);
    expect(JSON.parse(delivery.body)).toEqual({
      type: "job.completed",
      timestamp: expect.any(String),
      data: { job_id: "job_1", session_id: "s1", status: "completed" },
    });
  });
});
