// The sessions service needs Postgres and the documents address (for the workspace workflows).
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("sessions loadConfig", () => {
  it("reads DATABASE_URL and the documents address, with no NATS or S3 settings", () => {
    const cfg = loadConfig({ DATABASE_URL: "postgres://db/x", DOCUMENTS_ADDR: "docs:8061" });
    expect(cfg.databaseUrl).toBe("postgres://db/x");
    expect(cfg.addrs.documents).toBe("docs:8061");
  });

  it("names a missing DATABASE_URL", () => {
    expect(() => loadConfig({})).toThrow(/DATABASE_URL is not set/);
  });
});
