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
 * Reports the pool of `db` on scrape (labelled with its schema, a fixed set) while it exists:
 * redline_db_pool_connections{pool,state=used|free}, redline_db_pool_max_connections{pool} and
 * redline_db_pool_pending_acquires{pool}, whose growth means callers wait for a connection.
 */
function observePool(db: Knex, schema: string): void {
  // Held weakly and dropped at the first scrape after db.destroy() (knex then clears its pool),
  // so a destroyed pool is neither reported nor kept alive by the registry.
  const ref = new WeakRef(db);
  const pool = (): TarnPool | undefined => {
    const p = (ref.deref()?.client as { pool?: TarnPool } | undefined)?.pool;
    if (!p) for (const stop of stops) stop();
    return p;
  };
  const stops: (() => void)[] = [
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
}

/** Health probe: one round trip. */
export async function pingDb(db: Knex): Promise<void> {
  await db.raw("select 1");
}
