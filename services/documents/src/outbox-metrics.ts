// Outbox lag, read on scrape: how far the relay is behind Postgres, the record of every event.
import { gaugeOnScrape, type Knex, METRICS_PREFIX } from "@redline/service-kit";
import { TABLES } from "./db/tables.js";

/**
 * Reports redline_outbox_lag_seconds: the age of the oldest unpublished outbox event (0 when all
 * are published), from the partial index on unpublished rows, so a scrape costs one index probe.
 * A growing value means NATS is down or the relay stalled: subscribers see changes late.
 * Returns the function that stops it.
 */
export function observeOutboxLag(db: Knex): () => void {
  return gaugeOnScrape(
    `${METRICS_PREFIX}outbox_lag_seconds`,
    "Age of the oldest document event not yet published to NATS; 0 when the outbox is empty.",
    [],
    async (add) => {
      const res = await db.raw<{ rows: { age: number | null }[] }>(
        `select extract(epoch from now() - created_at)::float8 as age
           from ${TABLES.outbox} where published_at is null order by id limit 1`,
      );
      add({}, Math.max(0, res.rows[0]?.age ?? 0));
    },
  );
}
