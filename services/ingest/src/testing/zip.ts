// A minimal zip writer for hostile test fixtures (zip bombs, lying headers), built in memory
// by the tests themselves so no such file is stored in the repo.
import { crc32, deflateRawSync } from "node:zlib";

/** One entry: either data to store deflated, or pre-deflated bytes with the sizes to declare. */
export type ZipInput =
  | { name: string; data: Buffer | string }
  | { name: string; deflated: Buffer; uncompressedSize: number; crc?: number };

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
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, deflated);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(deflated.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
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
