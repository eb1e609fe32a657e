// Header values for stored objects: file names that cannot break or disguise a header, and media
// served as inert images (docs/security.md).
import { describe, expect, it } from "vitest";
import { contentDisposition, INERT_CONTENT_HEADERS, mediaResponseHeaders, safeFilename } from "./object-store.js";

describe("safeFilename", () => {
  it("keeps the last path segment without quotes, backslashes, semicolons or control characters", () => {
    const raw = [
      "../../etc/passwd",
      "C:\\Users\\x\\report.docx",
      'a"b;c\r\nSet-Cookie: x=1.txt',
      "tab\there\u0085.pdf",
    ];
    expect(raw.map((name) => safeFilename(name))).toEqual([
      "passwd",
      "report.docx",
      "abcSet-Cookie: x=1.txt",
      "tabhere.pdf",
    ]);
  });

  it("drops bidi controls that disguise an extension, and leading dots", () => {
    expect(safeFilename("invoice\u202efdp.exe")).toBe("invoicefdp.exe");
    expect(safeFilename("...hidden")).toBe("hidden");
  });

  it("falls back to 'download' and caps at 200 code points without splitting a pair", () => {
    expect(safeFilename("")).toBe("download");
    expect(safeFilename('/"\u0000')).toBe("download");
    const long = safeFilename("😀".repeat(300));
    expect([...long]).toHaveLength(200);
    expect(() => encodeURIComponent(long)).not.toThrow();
    expect(safeFilename("x\ud800y")).toBe("xy");
  });
});

describe("contentDisposition", () => {
  it("gives an ASCII fallback and the UTF-8 name (RFC 6266)", () => {
    expect(contentDisposition("attachment", "Résumé (v2).pdf")).toBe(
      `attachment; filename="R_sum_ (v2).pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%28v2%29.pdf`,
    );
    expect(contentDisposition("inline", '"><script>.png')).toBe(
      `inline; filename="><script>.png"; filename*=UTF-8''%3E%3Cscript%3E.png`,
    );
  });
});

describe("mediaResponseHeaders", () => {
  const id = "a".repeat(64);
  it("serves raster images inline under their type, sandboxed", () => {
    expect(mediaResponseHeaders(id, "image/PNG")).toEqual({
      ...INERT_CONTENT_HEADERS,
      "Content-Type": "image/png",
      "Content-Disposition": `inline; filename="${id}.png"; filename*=UTF-8''${id}.png`,
    });
    expect(mediaResponseHeaders(id, "image/jpeg")["Content-Disposition"]).toContain(`${id}.jpg`);
  });

  it("serves SVG and non-image types as an octet-stream attachment, undrawable images as attachments", () => {
    for (const type of ["image/svg+xml", "IMAGE/SVG", "image/foo+xml", "text/html", "image/png x", ""]) {
      const headers = mediaResponseHeaders(id, type);
      expect(headers["Content-Type"]).toBe("application/octet-stream");
      expect(headers["Content-Disposition"]).toMatch(/^attachment; filename="a+\.bin"/);
      expect(headers["Content-Security-Policy"]).toBe("default-src 'none'; sandbox");
      expect(headers["X-Content-Type-Options"]).toBe("nosniff");
    }
    expect(mediaResponseHeaders(id, "image/x-wmf")).toMatchObject({
      "Content-Type": "image/x-wmf",
      "Content-Disposition": expect.stringMatching(/^attachment; /),
    });
  });
});
