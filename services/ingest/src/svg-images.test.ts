// dropSvgImages: no SVG data: URL survives in an <img src>, whatever its encoding or quoting.
import { describe, expect, it } from "vitest";
import { dropSvgImages } from "./svg-images.js";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>';

describe("dropSvgImages", () => {
  it("removes base64, utf8, percent-encoded and unquoted SVG sources and keeps the element", () => {
    const html = [
      `<img alt="a" src="data:image/svg+xml;base64,${Buffer.from(SVG).toString("base64")}">`,
      `<img alt="b" src='data:image/svg+xml;utf8,${SVG}'>`,
      `<IMG ALT="c" SRC="DATA:IMAGE/SVG+XML,${encodeURIComponent(SVG)}" width="4">`,
      `<img alt="d" src=data:image/svg+xml;base64,PHN2Zz4=>`,
      `<img alt="e" src = " data:image/svg+xml,x">`,
    ].join("\n");
    const warnings: string[] = [];
    const out = dropSvgImages(html, warnings);
    expect(out).not.toMatch(/svg|script|onload/i);
    expect(out).toContain('<img alt="a">');
    expect(out).toContain('<IMG ALT="c" width="4">');
    expect(warnings).toEqual(["5 SVG image(s) were removed: SVG can carry scripts; use PNG or JPEG instead"]);
  });

  it("leaves raster data: URLs, /v1/media links and text about SVG alone", () => {
    const html =
      '<p>An svg file</p><img src="data:image/png;base64,AAAA"><img src="/v1/media/abc" alt="data:image/svg+xml">';
    const warnings: string[] = [];
    expect(dropSvgImages(html, warnings)).toBe(html);
    expect(warnings).toEqual([]);
  });
});
