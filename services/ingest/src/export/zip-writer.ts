// The one way exports write a ZIP package: file entries only. JSZip adds an entry for every
// folder of each path it is given (its `createFolders` default), so a package that gained a
// part (`word/media/image9.png`) would also gain `word/` and `word/media/`: Word writes no
// directory entries, and strict readers and package comparisons see extra parts.
import type JSZip from "jszip";

/**
 * `zip` written as a package of its files (directory entries removed from `zip` first), DEFLATE
 * compressed unless `compression` says STORE.
 */
export function writeZip(zip: JSZip, compression: "DEFLATE" | "STORE" = "DEFLATE"): Promise<Buffer> {
  for (const [name, entry] of Object.entries(zip.files)) if (entry.dir) delete zip.files[name];
  return zip.generateAsync({ type: "nodebuffer", compression });
}
