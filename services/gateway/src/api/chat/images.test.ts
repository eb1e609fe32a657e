import { describe, expect, it } from "vitest";
import { imageProblem, sniffImageType } from "./images.js";

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));

describe("sniffImageType", () => {
  it("reads PNG, JPEG, GIF and WebP from their magic bytes", () => {
    expect(sniffImageType(bytes([0x89], "PNG\r\n\x1a\n", [0, 0, 0]))).toBe("image/png");
    expect(sniffImageType(bytes([0xff, 0xd8, 0xff, 0xdb], "........"))).toBe("image/jpeg");
    expect(sniffImageType(bytes("GIF89a", [1, 0, 1, 0, 0, 0]))).toBe("image/gif");
    expect(sniffImageType(bytes("GIF87a", [1, 0, 1, 0, 0, 0]))).toBe("image/gif");
    expect(sniffImageType(bytes("RIFF", [0x24, 0, 0, 0], "WEBP"))).toBe("image/webp");
  });

  it("answers undefined for other bytes: RIFF that is not WebP, SVG, PDF, too short", () => {
    expect(sniffImageType(bytes("RIFF", [0x24, 0, 0, 0], "WAVE"))).toBeUndefined();
    expect(sniffImageType(bytes("<svg xmlns="))).toBeUndefined();
    expect(sniffImageType(bytes("%PDF-1.7 ...."))).toBeUndefined();
    expect(sniffImageType(bytes([0x89], "PN"))).toBeUndefined();
  });
});

describe("imageProblem", () => {
  const gif = Buffer.from(bytes("GIF89a", [1, 0, 1, 0, 0, 0])).toString("base64");
  it("accepts a declared type with parameters or another case, and URL-safe base64", () => {
    expect(imageProblem({ base64Data: gif, mimeType: "Image/GIF; charset=binary" })).toBeUndefined();
    const webp = Buffer.from(bytes("RIFF", [0xff, 0xff, 0, 0], "WEBP", [0xfb, 0xff])).toString("base64url");
    expect(webp).toMatch(/[-_]/);
    expect(imageProblem({ base64Data: webp, mimeType: "image/webp" })).toBeUndefined();
  });

  it("refuses a declared type that is no image type", () => {
    expect(imageProblem({ base64Data: gif, mimeType: "application/octet-stream" })).toMatch(/does not match/);
  });
});
