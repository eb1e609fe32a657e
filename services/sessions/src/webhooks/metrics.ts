// Webhook metrics: deliveries enqueued by event type, attempts by outcome, and the due backlog
// (count and age of the oldest due delivery) computed on scrape.
import { backlogGaugesOnScrape, counter, histogram, type Knex, METRICS_PREFIX } from "@redline/service-kit";
import { deliveryBacklog } from "../db/store/webhooks.js";

const enqueued = counter(
  `${METRICS_PREFIX}webhook_deliveries_enqueued_total`,
  "Webhook deliveries enqueued (one per subscribed endpoint and event), by event type.",
  ["event"],
);

const attempts = counter(
  `${METRICS_PREFIX}webhook_attempts_total`,
  "Webhook delivery attempts, by outcome: delivered (2xx), retry (will be tried again), failed (gave up).",
  ["outcome"],
);

const attemptSeconds = histogram(
  `${METRICS_PREFIX}webhook_attempt_duration_seconds`,
  "Duration of one webhook delivery attempt, connect to response end.",
);

/** Counts `n` deliveries enqueued for `event`. */
export function countEnqueued(event: string, n: number): void {
  enqueued.inc({ event }, n);
}

/** Counts one attempt's outcome and records its duration. */
export function countAttempt(outcome: "delivered" | "retry" | "failed", seconds: number): void {
  attempts.inc({ outcome });
  attemptSeconds.observe(seconds);
}

/** redline_webhook_backlog and redline_webhook_backlog_age_seconds on scrape; returns the stop function. */
export function observeWebhookBacklog(db: Knex): () => void {
  return backlogGaugesOnScrape(
    () => deliveryBacklog(db),
    { name: `${METRICS_PREFIX}webhook_backlog`, help: "Webhook deliveries due now and not yet attempted." },
    {
      name: `${METRICS_PREFIX}webhook_backlog_age_seconds`,
      help: "How long the oldest due webhook delivery has waited; 0 when none.",
    },
  );
}
