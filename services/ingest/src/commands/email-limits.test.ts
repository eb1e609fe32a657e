// safeExportFilename: what may reach a mail body and a Content-Disposition from a caller's filename.
import { describe, expect, it } from "vitest";
import { safeExportFilename } from "./email-limits.js";

describe("safeExportFilename", () => {
  it("keeps a plain name and gives it the format's extension", () => {
    expect(safeExportFilename("Q3 report", "pdf")).toBe("Q3 report.pdf");
    expect(safeExportFilename("Q3 report.PDF", "pdf")).toBe("Q3 report.pdf");
    expect(safeExportFilename("notes.docx", "markdown")).toBe("notes.md");
    expect(safeExportFilename("Überblick 2026", "docx")).toBe("Überblick 2026.docx");
  });

  it("drops paths, line breaks, control, bidi and reserved characters", () => {
    expect(safeExportFilename("../../etc/passwd", "txt")).toBe("passwd.txt");
    expect(safeExportFilename("C:\\Users\\x\\evil", "txt")).toBe("evil.txt");
    expect(safeExportFilename("a\r\nBcc: v@example.org", "txt")).toBe("a Bcc_ v@example.txt");
    expect(safeExportFilename("invoice\u202Efdp.exe", "html")).toBe("invoice fdp.html");
    expect(safeExportFilename('x"<y>|*?\u0000\u2028z', "txt")).toBe("x__y____ z.txt");
  });

  it("bounds the length and never returns an empty or hidden name", () => {
    const long = safeExportFilename("a".repeat(5000), "docx");
    expect(long).toBe(`${"a".repeat(100)}.docx`);
    expect(safeExportFilename("", "pdf")).toBe("document.pdf");
    expect(safeExportFilename("\r\n/", "pdf")).toBe("document.pdf");
    expect(safeExportFilename("...hidden", "txt")).toBe("hidden.txt");
    expect(safeExportFilename(" . ", "txt")).toBe("document.txt");
  });
});
