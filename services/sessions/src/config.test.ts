// The sessions service needs Postgres, NATS (the webhooks consumer) and the documents address (for the workspace workflows).
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("sessions loadConfig", () => {
  it("reads DATABASE_URL, NATS_URL and the documents address, with no S3 settings", () => {
    const cfg = loadConfig({ DATABASE_URL: "postgres://db/x", NATS_URL: "nats://n:4222", DOCUMENTS_ADDR: "docs:8061" });
    expect(cfg.databaseUrl).toBe("postgres://db/x");
    expect(cfg.natsUrl).toBe("nats://n:4222");
    expect(cfg.addrs.documents).toBe("docs:8061");
    expect(cfg.webhooks).toEqual({ allowPrivate: false });
  });

  it("reads the WEBHOOK_* settings and refuses bad ones", () => {
    const base = { DATABASE_URL: "postgres://db/x", NATS_URL: "nats://n:4222" };
    const cfg = loadConfig({ ...base, WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_CONSUMER: "c" });
    expect(cfg.webhooks).toEqual({ allowPrivate: true, retryBaseMs: 50, consumer: "c" });
    expect(() => loadConfig({ ...base, WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadConfig({ ...base, WEBHOOK_TIMEOUT_MS: "-1" })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  it("names a missing NATS_URL", () => {
    expect(() => loadConfig({ DATABASE_URL: "postgres://db/x" })).toThrow(/NATS_URL is not set/);
  });

  it("names a missing DATABASE_URL", () => {
    expect(() => loadConfig({})).toThrow(/DATABASE_URL is not set/);
  });
});
