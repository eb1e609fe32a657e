import { join } from "node:path";
import { DEFAULT_ADDRS } from "@redline/service-kit";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("loadConfig", () => {
  it("applies the defaults", () => {
    expect(loadConfig({})).toEqual({
      grpcAddress: DEFAULT_ADDRS.ingest,
      addrs: { billing: DEFAULT_ADDRS.billing, documents: DEFAULT_ADDRS.documents },
      maxUploadBytes: 100 * 1024 * 1024,
      logLevel: "info",
      mail: { sinkDir: join(".redline", "mail") },
    });
  });

  it("reads every variable", () => {
    expect(
      loadConfig({
        INGEST_ADDR: "0.0.0.0:6000",
        MAX_UPLOAD_MB: "2.5",
        LOG_LEVEL: "debug",
        SUPPORT_EMAIL: "help@example.com",
        CONVERT_TIMEOUT_MS: "5000",
        CONVERTER_WORKERS: "3",
        EXPORT_MAX_MB: "10",
        CHROMIUM_PATH: "/opt/chrome",
        MAX_ATTACHMENT_MB: "5",
        DATABASE_URL: "postgres://db/redline",
        S3_ENDPOINT: "http://s3:9000",
        S3_PUBLIC_ENDPOINT: "https://files.example.com",
        SMTP_URL: "smtp://mail:25",
        MAIL_FROM: "Docs <docs@example.com>",
        REDLINE_DATA_DIR: "/data",
        EMAIL_EXPORTS_PER_HOUR: "5",
        FILE_SWEEP_MS: "60000",
        BILLING_ADDR: "billing:7000",
        DOCUMENTS_ADDR: "documents:7001",
      }),
    ).toEqual({
      grpcAddress: "0.0.0.0:6000",
      addrs: { billing: "billing:7000", documents: "documents:7001" },
      maxUploadBytes: 2.5 * 1024 * 1024,
      logLevel: "debug",
      supportEmail: "help@example.com",
      limits: { timeoutMs: 5000 },
      converterWorkers: 3,
      exportMaxMb: { docx: 10, pdf: 10, html: 10, markdown: 10, txt: 10 },
      chromiumPath: "/opt/chrome",
      maxAttachmentBytes: 5 * 1024 * 1024,
      databaseUrl: "postgres://db/redline",
      s3: {
        endpoint: "http://s3:9000",
        accessKey: "S3RVER",
        secretKey: "S3RVER",
        bucket: "redline",
        region: "us-east-1",
      },
      s3PublicEndpoint: "https://files.example.com",
      emailExportsPerHour: 5,
      fileSweepMs: 60_000,
      mail: { smtpUrl: "smtp://mail:25", sinkDir: join("/data", "mail"), from: "Docs <docs@example.com>" },
    });
  });

  it("names the variable that is malformed", () => {
    expect(() => loadConfig({ EMAIL_EXPORTS_PER_HOUR: "0" })).toThrow(
      'EMAIL_EXPORTS_PER_HOUR must be an integer >= 1, got "0"',
    );
    expect(() => loadConfig({ MAX_UPLOAD_MB: "lots" })).toThrow('MAX_UPLOAD_MB must be a positive number, got "lots"');
    expect(() => loadConfig({ CONVERTER_WORKERS: "0" })).toThrow(/CONVERTER_WORKERS/);
    expect(() => loadConfig({ FILE_SWEEP_MS: "0.5" })).toThrow('FILE_SWEEP_MS must be an integer >= 1, got "0.5"');
  });

  it("reads REMOTE_IMAGES: keep (the default when unset) or drop, any case", () => {
    expect(loadConfig({}).remoteImages).toBeUndefined();
    expect(loadConfig({ REMOTE_IMAGES: "Drop" }).remoteImages).toBe("drop");
    expect(loadConfig({ REMOTE_IMAGES: "keep" }).remoteImages).toBe("keep");
    expect(() => loadConfig({ REMOTE_IMAGES: "block" })).toThrow('REMOTE_IMAGES must be "keep" or "drop", got "block"');
  });
});
