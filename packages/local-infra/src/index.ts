// @redline/local-infra: embedded Postgres, NATS (JetStream) and S3 for `pnpm start` and tests,
// each replaceable by an external service through DATABASE_URL, NATS_URL and S3_ENDPOINT.

export type { LocalInfra, S3Settings, StartLocalInfraOptions } from "./infra.js";
export { DEFAULT_PORTS, infraEnv, startLocalInfra, stopOrphanedInfra } from "./infra.js";
export type { EmbeddedNatsHandle, StartNatsOptions } from "./nats.js";
export { clearStaleNats, natsServerBinary, startNats } from "./nats.js";
export type { EmbeddedPostgresHandle, StartPostgresOptions } from "./postgres.js";
export {
  clearStalePostmaster,
  createDatabase,
  createTestDatabase,
  databaseUrl,
  dropDatabase,
  startPostgres,
} from "./postgres.js";
export { postgresDataDir, removePostgresData, STAGE_ROOT, STATE_ROOT } from "./postgres-placement.js";
export * from "./proc.js";
export {
  assertOrphaned,
  canConnect,
  childExited,
  findExecutable,
  forEachLine,
  freePort,
  isAlive,
  isPortFree,
  parentPid,
  processArgs,
  processName,
  processStartTime,
  signal,
  spawnTied,
  terminate,
  waitForExit,
} from "./proc.js";
export type { EmbeddedS3Handle, S3Credentials, StartS3Options } from "./s3.js";
export { clearStaleS3, s3Credentials, startS3 } from "./s3.js";
