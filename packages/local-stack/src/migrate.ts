// Every backend's migrations, applied once by the supervisor before the services start (the
// services only check that their schema is current).
import { createDb, migrateLatest, type SchemaSpec } from "@redline/service-kit";
import { BACKEND_SERVICES, type BackendName } from "./names.js";

/** The package of each backend service: its src/index.ts exports SCHEMA and migrations. */
const SERVICE_PACKAGES: Record<BackendName, string> = {
  documents: "@redline/documents",
  sessions: "@redline/sessions",
  billing: "@redline/billing",
  ingest: "@redline/ingest",
  agent: "@redline/agent",
};

/** What migrateServices reads from a service package. */
interface ServiceSchemaExports {
  SCHEMA: string;
  migrations: SchemaSpec["migrations"];
}

let schemas: Promise<Record<BackendName, SchemaSpec>> | undefined;

/**
 * The schema of each backend service with its migration list, from each service's src/index.ts.
 * Loaded on first use (and then kept): importing the five services takes seconds and over 100 MB,
 * which a supervisor of fake services (tests) never needs; calling it early lets the load overlap
 * the infrastructure's start. The specifiers are not literals so that this package's build does
 * not compile the services (they are built on their own; at run time Node resolves them as usual).
 */
export function serviceSchemas(): Promise<Record<BackendName, SchemaSpec>> {
  schemas ??= (async () => {
    const loaded = await Promise.all(
      BACKEND_SERVICES.map(async (name): Promise<[BackendName, SchemaSpec]> => {
        const m = (await import(SERVICE_PACKAGES[name])) as ServiceSchemaExports;
        return [name, { schema: m.SCHEMA, migrations: m.migrations }];
      }),
    );
    return Object.fromEntries(loaded) as Record<BackendName, SchemaSpec>;
  })();
  return schemas;
}

/**
 * Applies every backend's pending migrations on `databaseUrl`, the schemas side by side, as
 * `main.ts migrate` of each service would (in process: no five extra process starts). Services
 * started afterwards find their schema current; runners racing on a schema wait for each other.
 * Throws naming the schema whose migration failed.
 */
export async function migrateServices(databaseUrl: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const specs = await serviceSchemas();
  const results = await Promise.all(
    BACKEND_SERVICES.map(async (name) => {
      const { schema, migrations } = specs[name];
      const db = createDb(databaseUrl, schema, 2);
      try {
        return { schema, applied: await migrateLatest(db, schema, migrations) };
      } catch (err) {
        throw new Error(`migrating schema "${schema}" of ${name} failed: ${(err as Error).message}`, { cause: err });
      } finally {
        await db.destroy();
      }
    }),
  );
  const applied = results.filter((r) => r.applied.length > 0).map((r) => `${r.schema} +${r.applied.length}`);
  log(
    `[supervisor] migrations done in ${Date.now() - started} ms (${applied.length > 0 ? `applied: ${applied.join(", ")}` : "every schema up to date"})`,
  );
}
