// Postgres through knex: one pool per service whose search_path is its own schema (migrations.ts
// applies and checks the schema's migrations).
import knexFactory, { type Knex } from "knex";

export type { Knex };

/** Opens a pool on `url` whose search_path is the service's own schema. */
export function createDb(url: string, schema: string, poolMax = 10): Knex {
  return knexFactory({
    client: "pg",
    connection: url,
    searchPath: [schema, "public"],
    pool: { min: 0, max: poolMax },
  });
}

/** Health probe: one round trip. */
export async function pingDb(db: Knex): Promise<void> {
  await db.raw("select 1");
}
