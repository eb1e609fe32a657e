// Postgres through knex: one pool per service whose search_path is its own schema (migrations.ts
// applies and checks the schema's migrations).
import knexFactory, { type Knex } from "knex";
import { gaugeOnScrape, METRICS_PREFIX } from "./metrics.js";

export type { Knex };

/** Opens a pool on `url` whose search_path is the service's own schema. */
export function createDb(url: string, schema: string, poolMax = 10): Knex {
  const db = knexFactory({
    client: "pg",
    connection: url,
    searchPath: [schema, "public"],
    pool: { min: 0, max: poolMax },
  });
  observePool(db, schema);
  return db;
}

/** The counters of knex's tarn pool that tell saturation: used, free, waiting acquires, max. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/**
 * Reports the pool of `db` on scrape (labelled with its schema, a fixed set) until db.destroy():
 * redline_db_pool_connections{pool,state=used|free}, redline_db_pool_max_connections{pool} and
 * redline_db_pool_pending_acquires{pool}, whose growth means callers wait for a connection.
 */
function observePool(db: Knex, schema: string): void {
  const pool = () => (db.client as { pool?: TarnPool }).pool;
  const stops = [
    gaugeOnScrape(
      `${METRICS_PREFIX}db_pool_connections`,
      "Connections of the service's Postgres pool, by state (used: checked out; free: idle).",
      ["pool", "state"],
      (add) => {
        const p = pool();
        if (!p) return;
        add({ pool: schema, state: "used" }, p.numUsed());
        add({ pool: schema, state: "free" }, p.numFree());
      },
    ),
    gaugeOnScrape(
      `${METRICS_PREFIX}db_pool_max_connections`,
      "Size limit of the service's Postgres pool.",
      ["pool"],
      (add) => {
        const p = pool();
        if (p) add({ pool: schema }, p.max);
      },
    ),
    gaugeOnScrape(
      `${METRICS_PREFIX}db_pool_pending_acquires`,
      "Queries waiting for a connection of the service's Postgres pool.",
      ["pool"],
      (add) => {
        const p = pool();
        if (p) add({ pool: schema }, p.numPendingAcquires());
      },
    ),
  ];
  const destroy = db.destroy.bind(db);
  // Forget the pool once destroyed, so a closed service leaves no stale series (or a leak) behind.
  db.destroy = ((callback?: (err?: unknown) => void) => {
    for (const stop of stops) stop();
    return destroy(callback as never);
  }) as Knex["destroy"];
}

/** Health probe: one round trip. */
export async function pingDb(db: Knex): Promise<void> {
  await db.raw("select 1");
}
