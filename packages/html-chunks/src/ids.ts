import { createHash, randomBytes } from "node:crypto";

// 32 symbols so each random byte maps without modulo bias (5 bits per char).
const ALPHABET = "0123456789abcdefghijklmnopqrstuv";
const ID_LENGTH = 10;

/**
 * Mints a fresh chunk id: `c_` followed by 10 random lower-case base-32 chars
 * (50 bits of entropy). Uniqueness within a document is enforced by callers.
 */
export function mintChunkId(): string {
  if (poolOffset + ID_LENGTH > pool.length) refillPool();
  let id = "c_";
  for (let i = 0; i < ID_LENGTH; i++) id += ALPHABET[pool[poolOffset + i] & 31];
  poolOffset += ID_LENGTH;
  return id;
}

// One randomBytes call per ~400 ids: a call per id dominated chunking time on
// large documents.
const POOL_SIZE = 4096;
let pool: Buffer = Buffer.alloc(0);
let poolOffset = 0;

function refillPool(): void {
  pool = randomBytes(POOL_SIZE);
  poolOffset = 0;
}

// Existing ids are kept only when they are short and attribute/URL-safe, so a
// hostile document cannot smuggle odd strings into ids used as keys elsewhere.
const VALID_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/** True when `id` is acceptable as a kept (not minted) chunk id. */
export function isValidChunkId(id: string): boolean {
  return VALID_ID.test(id);
}

/**
 * A reproducible id source: the n-th id it mints is derived from sha256(`seed:n`), in the same
 * `c_` + 10 base-32 form as mintChunkId. Two chunkings of the same content with the same seed
 * mint the same ids, so a job rerun after a crash edits the chunk ids its first run stored.
 */
export function seededChunkIds(seed: string): () => string {
  let n = 0;
  return () => {
    const digest = createHash("sha256").update(`${seed}:${n++}`).digest();
    let id = "c_";
    for (let i = 0; i < ID_LENGTH; i++) id += ALPHABET[digest[i] & 31];
    return id;
  };
}

/** Mints an id (from `mint`, default random) not present in `taken`, and records it there. */
export function mintUniqueId(taken: Set<string>, mint: () => string = mintChunkId): string {
  let id = mint();
  while (taken.has(id)) id = mint();
  taken.add(id);
  return id;
}
