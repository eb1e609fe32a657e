import { DEFAULT_ADDRS } from "@redline/service-kit";
import { describe, expect, it } from "vitest";
import { readIngestEnv } from "./config.js";

describe("readIngestEnv", () => {
  it("applies the defaults", () => {
    expect(readIngestEnv({})).toEqual({
      grpcAddress: DEFAULT_ADDRS.ingest,
      maxUploadBytes: 100 * 1024 * 1024,
      logLevel: "info",
    });
  });

  it("reads every variable", () => {
    expect(
      readIngestEnv({
        INGEST_ADDR: "0.0.0.0:6000",
        MAX_UPLOAD_MB: "2.5",
        LOG_LEVEL: "debug",
        SUPPORT_EMAIL: "help@example.com",
        CONVERT_TIMEOUT_MS: "5000",
        CONVERTER_WORKERS: "3",
      }),
    ).toEqual({
      grpcAddress: "0.0.0.0:6000",
      maxUploadBytes: 2.5 * 1024 * 1024,
      logLevel: "debug",
      supportEmail: "help@example.com",
      limits: { timeoutMs: 5000 },
      converterWorkers: 3,
    });
  });

  it("names the variable that is malformed", () => {
    expect(() => readIngestEnv({ MAX_UPLOAD_MB: "lots" })).toThrow(
      'MAX_UPLOAD_MB must be a positive number, got "lots"',
    );
    expect(() => readIngestEnv({ CONVERTER_WORKERS: "0" })).toThrow(/CONVERTER_WORKERS/);
  });
});
