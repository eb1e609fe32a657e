// Section counting: a heading chunk anchors a section, so section counts follow heading chunks.

/** True when a chunk's HTML is a heading element (it anchors a section). */
export function isHeadingHtml(html: string): boolean {
  return /^\s*<h[1-6][\s>]/i.test(html);
}
