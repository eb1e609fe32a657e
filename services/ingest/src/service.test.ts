import { healthV1, ingestV1 } from "@redline/grpc-stubs";
import { createRpcClient, RemoteError, type RpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIngestService, startIngestService } from "./service.js";
import { readCorpus } from "./testing/corpus.js";

describe("ingest gRPC service", () => {
  let service: RunningIngestService;
  let client: RpcClient<typeof ingestV1.IngestServiceService>;

  beforeAll(async () => {
    service = await startIngestService({
      grpcAddress: "127.0.0.1:0",
      maxUploadBytes: 1024 * 1024,
      logLevel: "silent",
      converterWorkers: 1,
    });
    client = createRpcClient(ingestV1.IngestServiceService, service.address);
  });
  afterAll(async () => {
    client?.close();
    await service?.close();
  });

  it("converts a docx", async () => {
    const res = await client.convertDocument({
      filename: "tika-testWORD_various.docx",
      content: readCorpus("docx/tika-testWORD_various.docx"),
    });
    expect(res.format).toBe("docx");
    // Its header and footer parts come from the file: a load may keep them.
    expect(res.partsFromFile).toBe(true);
    expect(res.html).toContain("<table>");
    expect(res.title).toBe("tika-testWORD_various");
    expect(res.pageSetup).toEqual({
      sizeName: "Letter",
      orientation: "portrait",
      marginsInches: { top: 1, right: 1, bottom: 1, left: 1 },
    });
    expect(res.html).toContain('<p data-part="header" data-variant="default">This is the header text.</p>');
  });

  it("answers .doc with 415 and the supported extensions", async () => {
    const err = await client
      .convertDocument({ filename: "tika-testWORD_various.doc", content: readCorpus("doc/tika-testWORD_various.doc") })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    const remote = err as RemoteError;
    expect(remote.httpStatus).toBe(415);
    expect(remote.detail).toBe(
      "Unsupported file type '.doc'. Supported extensions: .pdf, .docx, .txt, .rtf, .md, .html, .htm",
    );
    expect(remote.body).toMatchObject({ code: "unsupported_media_type" });
  });

  it("answers a damaged docx with 400 and an empty page setup for text", async () => {
    const err = await client
      .convertDocument({ filename: "t.docx", content: readCorpus("docx/poi-truncated62886.docx") })
      .catch((e: unknown) => e);
    expect((err as RemoteError).httpStatus).toBe(400);
    expect((err as RemoteError).detail).toMatch(/damaged/);
    const txt = await client.convertDocument({ filename: "a.txt", content: Buffer.from("hi") });
    expect(txt.pageSetup).toBeUndefined();
    // Text and HTML carry only what the author typed: their part marks are not trusted.
    expect(txt.partsFromFile).toBe(false);
    const page = await client.convertDocument({
      filename: "a.html",
      content: Buffer.from('<p data-part="header">x</p>'),
    });
    expect(page.partsFromFile).toBe(false);
  });

  it("answers content over the upload cap with 413 request_too_large", async () => {
    const err = await client
      .convertDocument({ filename: "big.txt", content: Buffer.alloc(2 * 1024 * 1024, 0x61) }, { requestId: "req-413" })
      .catch((e: unknown) => e);
    const remote = err as RemoteError;
    expect(remote.httpStatus).toBe(413);
    expect(remote.body).toMatchObject({
      error_code: "request_too_large",
      request_size_mb: 2,
      max_size_mb: 1,
      suggested_action: "split_request",
      contact_email: "support@redline.local",
      support_event_id: "req-413",
    });
  });

  it("answers a missing file name with 400", async () => {
    const err = await client.convertDocument({ filename: " ", content: Buffer.from("x") }).catch((e: unknown) => e);
    expect((err as RemoteError).httpStatus).toBe(400);
  });

  it("reports SERVING on the standard health service", async () => {
    const health = createRpcClient(healthV1.HealthService, service.address);
    try {
      expect((await health.check({ service: "" })).status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      health.close();
    }
  });

  it("lists the 7 extensions, each with its MIME type", async () => {
    const res = await client.listFormats({});
    expect(res.extensions).toEqual([".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"]);
    expect(res.contentTypes).toEqual({
      ".pdf": "application/pdf",
      ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      ".txt": "text/plain",
      ".rtf": "application/rtf",
      ".md": "text/markdown",
      ".html": "text/html",
      ".htm": "text/html",
    });
  });
});
