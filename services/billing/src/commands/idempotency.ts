// Idempotency-Key (issue #13): the gateway claims a key before running a billable or creating
// request and stores its response after, so a retry answers the stored response instead of
// running (and charging) again. Keys are scoped to the principal's owner: one tenant's key can
// never collide with, or reveal, another's.
import { InputError, type Knex, type Logger, type Principal } from "@redline/service-kit";
import {
  claimKey,
  type IdempotencyRef,
  readRecord,
  releaseKey,
  type StoredReply,
  storeReply,
  sweepExpired,
} from "../db/store/idempotency.js";

/** What a claim found. */
export type BeginOutcome =
  | { outcome: "started" }
  | { outcome: "replay"; reply: StoredReply }
  | { outcome: "in_progress" }
  | { outcome: "mismatch" };

/** The key as the client sent it: 1-255 printable ASCII characters. */
const KEY = /^[\x21-\x7e]{1,255}$/;
const HASH = /^[0-9a-f]{64}$/;
/** One claim in SWEEP_EVERY also deletes a few expired records, so the table stays bounded without a cron. */
const SWEEP_EVERY = 100;
const SWEEP_LIMIT = 200;

function refOf(principal: Principal, key: string, requestHash: string): IdempotencyRef {
  if (!KEY.test(key)) throw new InputError("Idempotency-Key must be 1-255 printable ASCII characters");
  if (!HASH.test(requestHash)) throw new InputError("request_hash must be a lowercase sha256 hex digest");
  return { ownerId: principal.ownerId, key, requestHash };
}

/**
 * Claims `key` for the owner's request with hash `requestHash`, holding it `leaseSeconds`
 * (then a retry may take over a claim whose gateway died). Outcomes: started (run it, then
 * completeIdempotency), replay (the stored response), in_progress (the same request is running),
 * mismatch (the key was used with another request). InputError (400) for a malformed key or hash.
 */
export async function beginIdempotency(
  db: Knex,
  log: Logger,
  principal: Principal,
  req: { key: string; requestHash: string; leaseSeconds: number },
): Promise<BeginOutcome> {
  const ref = refOf(principal, req.key, req.requestHash);
  const lease = Math.max(1, Math.ceil(req.leaseSeconds));
  // Two tries: a record released or expiring between the claim and the read frees the key.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await claimKey(db, ref, lease)) {
      if (Math.random() * SWEEP_EVERY < 1) {
        sweepExpired(db, SWEEP_LIMIT).catch((err) => log.warn({ err }, "idempotency sweep failed"));
      }
      return { outcome: "started" };
    }
    const row = await readRecord(db, ref.ownerId, ref.key);
    if (!row) continue;
    if (row.request_hash !== ref.requestHash) return { outcome: "mismatch" };
    if (row.state === "running") return { outcome: "in_progress" };
    return {
      outcome: "replay",
      reply: { status: row.status ?? 200, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
    };
  }
  return { outcome: "in_progress" };
}

/**
 * Ends a claim: stores `reply` for replay until the key's 24 h run out, or, without a reply,
 * releases the key so a retry runs the request again. False when the claim was no longer held.
 */
export async function completeIdempotency(
  db: Knex,
  principal: Principal,
  req: { key: string; requestHash: string; reply?: StoredReply },
): Promise<boolean> {
  const ref = refOf(principal, req.key, req.requestHash);
  if (!req.reply) return releaseKey(db, ref);
  if (!(req.reply.status >= 100 && req.reply.status <= 599)) throw new InputError("status must be 100-599");
  return storeReply(db, ref, req.reply);
}
