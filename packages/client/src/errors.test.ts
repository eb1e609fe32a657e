// RedlineApiError reads the code of each error body shape the spec gives (interface-spec.md,
// Errors; unshown-parts.md), and the export headers decode as the gateway writes them.
import { describe, expect, it } from "vitest";
import { dispositionFilename, exportWarnings, fromBase64, toBase64 } from "./bytes.js";
import { errorFromResponse, RedlineApiError } from "./errors.js";

const headers = new Headers({ "Retry-After": "12" });

describe("RedlineApiError", () => {
  it("takes code, error_code, the export 413's detail.error_code or a 422 item's type", () => {
    const cases: [unknown, string | null][] = [
      [{ detail: "in use", code: "document_in_use", open_in_sessions: 2 }, "document_in_use"],
      [{ detail: "too big", error_code: "request_too_large", max_size_mb: 100 }, "request_too_large"],
      [{ detail: { error_code: "document_too_large", message_user: "Too large" } }, "document_too_large"],
      [
        { detail: [{ type: "idempotency_key_reused", loc: ["header", "Idempotency-Key"], msg: "m" }] },
        "idempotency_key_reused",
      ],
      [{ detail: "Not found" }, null],
      ["<html>Request Entity Too Large</html>", null],
      [null, null],
    ];
    for (const [body, code] of cases) expect(new RedlineApiError(413, body, headers).code).toBe(code);
  });

  it("says what went wrong in its message and exposes Retry-After", () => {
    expect(new RedlineApiError(404, { detail: "Job not found" }, headers).message).toBe("404: Job not found");
    const invalid = new RedlineApiError(
      422,
      { detail: [{ type: "missing", loc: ["body", "message"], msg: "Required" }] },
      headers,
    );
    expect(invalid.message).toBe("422: body.message: Required");
    expect(invalid.retryAfterSeconds).toBe(12);
  });

  it("keeps a non-JSON body as text", async () => {
    const err = await errorFromResponse(new Response("<html>busy</html>", { status: 503 }));
    expect(err).toMatchObject({ status: 503, code: null, body: "<html>busy</html>" });
  });
});

describe("export headers", () => {
  it("reads the RFC 5987 file name first, then the quoted one", () => {
    expect(dispositionFilename(`attachment; filename="Vertrag _.docx"; filename*=UTF-8''Vertrag%20%C3%A4.docx`)).toBe(
      "Vertrag ä.docx",
    );
    expect(dispositionFilename('attachment; filename="a.pdf"')).toBe("a.pdf");
    expect(dispositionFilename(null)).toBeNull();
  });

  it("decodes X-Export-Warnings (base64 of UTF-8 JSON) and round-trips base64", () => {
    const warnings = ["Bild „Logo“ entfernt", "x"];
    const header = toBase64(new TextEncoder().encode(JSON.stringify(warnings)));
    expect(exportWarnings(header)).toEqual(warnings);
    expect(exportWarnings("not base64!")).toEqual([]);
    const bytes = new Uint8Array(70_000).map((_, i) => i % 256);
    expect(fromBase64(toBase64(bytes))).toEqual(bytes);
  });
});
