import { randomBytes } from "node:crypto";

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

/** Mints an id not present in `taken`, and records it there. */
export function mintUniqueId(taken: Set<string>): string {
  let id = mintChunkId();
  while (taken.has(id)) id = mintChunkId();
  taken.add(id);
  return id;
}
