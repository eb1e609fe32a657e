import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { decodeText } from "./encoding.js";

describe("decodeText", () => {
  it("follows a BOM", () => {
    expect(decodeText(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0xc3, 0xa9]))).toEqual({ text: "hé", encoding: "utf-8" });
    expect(decodeText(Buffer.from([0xfe, 0xff, 0x00, 0x68]))).toEqual({ text: "h", encoding: "utf-16be" });
  });

  it("detects BOM-less UTF-16LE", () => {
    expect(decodeText(Buffer.from("plain words here", "utf16le")).text).toBe("plain words here");
  });

  it("falls back to Windows-1252 (not ISO-8859-1) for bytes that are not UTF-8", () => {
    expect(decodeText(Buffer.from([0x93, 0x68, 0x94, 0x80]))).toEqual({ text: "“h”€", encoding: "windows-1252" });
  });

  it("uses a declared charset unless the bytes are evidently UTF-8", () => {
    expect(decodeText(iconv.encode("Жук", "koi8-r"), { declared: "koi8-r" }).text).toBe("Жук");
    expect(decodeText(Buffer.from("Жук"), { declared: "windows-1251" })).toEqual({ text: "Жук", encoding: "utf-8" });
    expect(decodeText(Buffer.from([0x93, 0x94]), { declared: "ISO-8859-1" }).text).toBe("“”");
  });
});
