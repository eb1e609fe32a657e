// Reading an exported .docx the way the in-place tests compare them: its parts by name, and the
// body's block-level children as the exact bytes Word would see.
import JSZip from "jszip";

/** The body's block-level children of word/document.xml (w:sectPr apart), by a depth count of tags. */
export function bodyBlocks(xml: string): string[] {
  const open = /<w:body\b[^>]*>/.exec(xml);
  if (!open) return [];
  const blocks: string[] = [];
  const tag = /<(\/?)w:([\w.-]+)\b[^>]*?(\/?)>/g;
  tag.lastIndex = open.index + open[0].length;
  let depth = 0;
  let start = -1;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    if (depth === 0 && m[1] === "/") break;
    if (depth === 0) start = m.index;
    if (m[3] !== "/") depth += m[1] === "/" ? -1 : 1;
    if (depth === 0 && m[2] !== "sectPr") blocks.push(xml.slice(start, tag.lastIndex));
  }
  return blocks;
}

/** Every file entry of a ZIP package (directory entries apart), by name. */
export async function packageParts(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await JSZip.loadAsync(bytes);
  const out = new Map<string, Buffer>();
  for (const [name, file] of Object.entries(zip.files)) if (!file.dir) out.set(name, await file.async("nodebuffer"));
  return out;
}
