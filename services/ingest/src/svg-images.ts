// SVG images never reach storage (see commands/media.ts for why): dropped in the converter worker,
// before sanitizing, so the caller is told in the conversion's warnings.
// The src of an <img> that is an SVG data: URL, in any encoding (base64, utf8, percent-encoded),
// quoted or not. One whitespace before `src` (not `\s+`): a lazy run followed by `\s+` would
// backtrack quadratically over a long run of spaces.
const SVG_IMG_SRC =
  /(<img\b[^>]*?\s)src\s*=\s*(?:"\s*data:image\/svg[^"]*"|'\s*data:image\/svg[^']*'|data:image\/svg[^\s>]*)/gi;

/**
 * Removes the src of every `<img>` whose src is an SVG data: URL (the element and its alt stay),
 * so no SVG is stored or served (see the file comment). Adds one line to `warnings` when it
 * removed any.
 */
export function dropSvgImages(html: string, warnings?: string[]): string {
  let dropped = 0;
  const out = html.replace(SVG_IMG_SRC, (_whole, start: string) => {
    dropped++;
    return start.trimEnd();
  });
  if (dropped && warnings)
    warnings.push(`${dropped} SVG image(s) were removed: SVG can carry scripts; use PNG or JPEG instead`);
  return out;
}
