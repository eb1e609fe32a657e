// The documents service needs Postgres and NATS only: no S3 variables, and a missing one is named.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("documents loadConfig", () => {
  it("reads DATABASE_URL, NATS_URL and DOCUMENTS_ADDR, with no S3 settings", () => {
    const cfg = loadConfig({ DATABASE_URL: "postgres://db/x", NATS_URL: "nats://n:4222", DOCUMENTS_ADDR: "0.0.0.0:7" });
    expect(cfg).toEqual({
      grpcAddress: "0.0.0.0:7",
      databaseUrl: "postgres://db/x",
      natsUrl: "nats://n:4222",
      logLevel: undefined,
    });
  });

  it("names the missing variable", () => {
    expect(() => loadConfig({ NATS_URL: "nats://n" })).toThrow(/DATABASE_URL is not set/);
    expect(() => loadConfig({ DATABASE_URL: "postgres://db/x" })).toThrow(/NATS_URL is not set/);
  });
});
