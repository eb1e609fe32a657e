// The delivery worker: leases due deliveries (several replicas take disjoint rows), sends each
// attempt to the address the guard checked, and records it: a 2xx is delivered, anything else
// (a status, a timeout, a refused address) is retried on the backoff schedule until the 24-hour
// window closes, then failed. At-least-once: a worker dying after the receiver answered but before
// the record retries the delivery with the same webhook-id, which receivers deduplicate on.
import type { Knex, Logger } from "@redline/service-kit";
import type { WebhooksConfig } from "../config.js";
import { type ClaimedDelivery, claimDueDeliveries, recordAttempt } from "../db/store/webhooks.js";
import { RefusedTargetError, resolveTarget } from "./address-guard.js";
import { nextAttemptAt } from "./backoff.js";
import { countAttempt } from "./metrics.js";
import { type AttemptOutcome, postWebhook, signatureHeaders } from "./send.js";

/** Deliveries one pass leases, sent concurrently. */
const BATCH = 20;
/** A lease outlasts an attempt by this much (ms), so it never runs out mid-request. */
const LEASE_MARGIN_MS = 30_000;

/** The outcome of one attempt at `d` (never throws). */
async function attempt(d: ClaimedDelivery, cfg: WebhooksConfig): Promise<AttemptOutcome> {
  try {
    // Resolved again each attempt (DNS may move), checked, then connected to as checked.
    const target = await resolveTarget(new URL(d.url), cfg.allowPrivate);
    return await postWebhook(target, d.body, signatureHeaders(d.secret, d.id, d.body), cfg.timeoutMs);
  } catch (err) {
    return { error: err instanceof RefusedTargetError ? `refused: ${err.message}` : String(err) };
  }
}

/** Sends one leased delivery and records the attempt. */
async function deliverOne(db: Knex, d: ClaimedDelivery, cfg: WebhooksConfig, log: Logger): Promise<void> {
  const started = Date.now();
  const outcome = await attempt(d, cfg);
  const durationMs = Date.now() - started;
  const ok = "status" in outcome && outcome.status >= 200 && outcome.status < 300;
  const next = ok ? null : nextAttemptAt(d.attempts + 1, new Date(d.created_at), cfg.retryBaseMs);
  const status = ok ? "delivered" : next ? "pending" : "failed";
  const responseCode = "status" in outcome ? outcome.status : null;
  const error = "error" in outcome ? outcome.error : ok ? null : `HTTP ${responseCode}`;
  await db.transaction((trx) =>
    recordAttempt(trx, { deliveryId: d.id, responseCode, error, durationMs, status, nextAttemptAt: next }),
  );
  countAttempt(ok ? "delivered" : next ? "retry" : "failed", durationMs / 1000);
  if (status === "failed")
    log.info({ delivery: d.id, endpoint: d.endpoint_id, error }, "webhook delivery failed for good");
}

/** One pass: lease due deliveries and send them, until none are due; returns how many were sent. */
export async function deliverDue(db: Knex, cfg: WebhooksConfig, log: Logger): Promise<number> {
  let sent = 0;
  for (;;) {
    const due = await claimDueDeliveries(db, BATCH, cfg.timeoutMs + LEASE_MARGIN_MS);
    await Promise.all(due.map((d) => deliverOne(db, d, cfg, log)));
    sent += due.length;
    if (due.length < BATCH) return sent;
  }
}

/** A running worker: `kick()` runs a pass now (after an enqueue), `stop()` waits for the pass under way. */
export interface DeliveryWorker {
  kick(): void;
  stop(): Promise<void>;
}

/** Starts the worker: a pass every `cfg.pollMs` ms and on kick(), one at a time; a failing pass is logged and retried. */
export function startDeliveryWorker(db: Knex, cfg: WebhooksConfig, log: Logger): DeliveryWorker {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = deliverDue(db, cfg, log)
      .then(() => undefined)
      .catch((err: unknown) => log.warn({ err }, "webhook delivery pass failed"))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const timer = setInterval(run, cfg.pollMs);
  timer.unref();
  return {
    kick: run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (running) await running;
    },
  };
}
