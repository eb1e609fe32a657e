// A minimal zip writer for hostile test fixtures (zip bombs, lying headers), built in memory
// by the tests themselves so no such file is stored in the repo.
import { crc32, deflateRawSync } from "node:zlib";

/** One entry: either data to store deflated, or pre-deflated bytes with the sizes to declare. */
export type ZipInput =
  | { name: string; data: Buffer | string }
  | { name: string; deflated: Buffer; uncompressedSize: number; crc?: number };

/**
 * The fields local and central headers share, from `at` (version needed, flags, method
 * deflate, then CRC and sizes at +10, name length at +22; time and date stay 0).
 */
function writeEntryFields(
  b: Buffer,
  at: number,
  f: { crc: number; compressed: number; size: number; nameLength: number },
): void {
  b.writeUInt16LE(20, at);
  b.writeUInt16LE(0, at + 2);
  b.writeUInt16LE(8, at + 4);
  b.writeUInt32LE(f.crc, at + 10);
  b.writeUInt32LE(f.compressed, at + 14);
  b.writeUInt32LE(f.size, at + 18);
  b.writeUInt16LE(f.nameLength, at + 22);
}

/** Builds a zip archive (deflate, no zip64) from the entries. */
export function buildZip(entries: ZipInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    let deflated: Buffer;
    let size: number;
    let crc: number;
    if ("data" in entry) {
      const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data, "utf8");
      deflated = deflateRawSync(data);
      size = data.length;
      crc = crc32(data);
    } else {
      deflated = entry.deflated;
      size = entry.uncompressedSize;
      crc = entry.crc ?? 0;
    }
    const fields = { crc: crc >>> 0, compressed: deflated.length, size, nameLength: name.length };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeEntryFields(local, 4, fields);
    locals.push(local, name, deflated);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    writeEntryFields(central, 6, fields);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + deflated.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(Math.min(entries.length, 0xffff), 8);
  eocd.writeUInt16LE(Math.min(entries.length, 0xffff), 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

/** Raw-deflates `totalBytes` zeros in 1 MiB steps, never holding the uncompressed data. */
export async function deflatedZeros(totalBytes: number): Promise<Buffer> {
  const { createDeflateRaw } = await import("node:zlib");
  const deflate = createDeflateRaw({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on("end", resolve);
    deflate.on("error", reject);
  });
  const mib = Buffer.alloc(1024 * 1024);
  for (let left = totalBytes; left > 0; left -= mib.length) {
    const piece = left >= mib.length ? mib : mib.subarray(0, left);
    if (!deflate.write(piece)) await new Promise((r) => deflate.once("drain", r));
  }
  deflate.end();
  await done;
  return Buffer.concat(chunks);
}

/** The parts every docx needs, around a given body XML. */
export function minimalDocxParts(bodyXml = "<w:p><w:r><w:t>Hello</w:t></w:r></w:p>"): ZipInput[] {
  return [
    {
      name: "[Content_Types].xml",
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    },
    {
      name: "_rels/.rels",
      data: '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    {
      name: "word/document.xml",
      data: `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${bodyXml}<w:sectPr><w:pgSz w:w="15840" w:h="12240" w:orient="landscape"/><w:pgMar w:top="720" w:right="1440" w:bottom="720" w:left="1440"/></w:sectPr></w:body></w:document>`,
    },
  ];
}
