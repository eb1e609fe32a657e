// Token buckets of the gateway's rate limits: all SQL of the limiter. One statement per decision
// on every keyed request's critical path (a request's key and account buckets together), so no
// read-modify-write across round trips and no transaction.
import type { Knex } from "@redline/service-kit";
import { type RateLimitBucketRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One bucket and its policy: `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface BucketRef {
  subject: string;
  limiter: string;
  capacity: number;
  refillPerSecond: number;
}

/** A bucket after a decision: tokens left (fractional) and the level it had before (refilled). */
export interface BucketLevel {
  subject: string;
  limiter: string;
  tokens: number;
  level: number;
}

/**
 * The refs in (subject, limiter) order, as parallel arrays for unnest: every statement locks rows
 * in this one order, so two requests sharing an account bucket never deadlock.
 */
function columns(refs: BucketRef[]) {
  const sorted = [...refs].sort((a, b) =>
    a.subject === b.subject ? (a.limiter < b.limiter ? -1 : 1) : a.subject < b.subject ? -1 : 1,
  );
  return {
    subjects: sorted.map((r) => r.subject),
    limiters: sorted.map((r) => r.limiter),
    capacities: sorted.map((r) => r.capacity),
    rates: sorted.map((r) => r.refillPerSecond),
  };
}

const INPUT = `input as (
    select * from unnest(cast(:subjects as text[]), cast(:limiters as text[]),
      cast(:capacities as float8[]), cast(:rates as float8[])) with ordinality as i(subject, limiter, capacity, rate, ord)
  )`;

/**
 * Takes one token from every bucket of `refs` or from none, in ONE statement: the rows are locked
 * in (subject, limiter) order (FOR UPDATE), each level is refilled from its stored timestamp
 * (level = min(capacity, tokens + elapsed × rate)), and only when every level is >= 1 is a token
 * taken from each; otherwise each stores its refilled level and none loses a token. The locks
 * serialize concurrent requests on a shared bucket, so N gateways can never take more tokens than
 * it holds. Returns null when a bucket has no row yet (nothing was written): create them
 * (createBuckets) and ask again.
 */
export async function takeTokens(db: Db, refs: BucketRef[]): Promise<BucketLevel[] | null> {
  // The update joins `verdict`, an aggregate over every locked row, so all locks are held before
  // the first row is written; a row changed since the statement's snapshot is re-read by the
  // lock (read committed), and the update writes from that latest version.
  const { rows } = await db.raw<{ rows: BucketLevel[] }>(
    `with ${INPUT},
     now as (select clock_timestamp() as t),
     locked as (
       select b.subject, b.limiter, b.tokens, b.updated_at
       from ${TABLES.rateLimitBuckets} b join input i on b.subject = i.subject and b.limiter = i.limiter
       order by b.subject, b.limiter
       for update of b
     ),
     levels as (
       select i.subject, i.limiter,
         least(i.capacity, l.tokens
           + greatest(0, cast(extract(epoch from n.t - l.updated_at) as float8)) * i.rate) as level
       from input i join locked l on l.subject = i.subject and l.limiter = i.limiter cross join now n
     ),
     verdict as (
       select count(*) = cardinality(cast(:subjects as text[])) as complete,
         coalesce(bool_and(level >= 1), false) as ok
       from levels
     )
     update ${TABLES.rateLimitBuckets} b set
       tokens = lv.level - case when v.ok then 1 else 0 end,
       allowed = v.ok,
       updated_at = greatest(b.updated_at, n.t)
     from levels lv, verdict v, now n
     where v.complete and b.subject = lv.subject and b.limiter = lv.limiter
     returning b.subject, b.limiter, b.tokens, lv.level`,
    columns(refs),
  );
  return rows.length === refs.length ? rows : null;
}

/** Creates the buckets of `refs` that have no row yet, full (a new bucket allows its whole burst). */
export async function createBuckets(db: Db, refs: BucketRef[]): Promise<void> {
  await db.raw(
    `with ${INPUT}
     insert into ${TABLES.rateLimitBuckets} (subject, limiter, tokens, allowed, updated_at)
     select subject, limiter, capacity, true, clock_timestamp() from input order by ord
     on conflict (subject, limiter) do nothing`,
    columns(refs),
  );
}

/**
 * Records `debit` requests a gateway already admitted (its early admissions, batched) on each
 * bucket of `refs`: the tokens are taken unconditionally, one atomic upsert per bucket (in lock
 * order) after the same refill, creating a bucket full first when absent; a bucket may go below
 * zero, so the debt delays the next requests instead of being forgotten. Debits are sent in the
 * background, so one statement per bucket costs no request any time.
 */
export async function debitTokens(
  db: Db,
  refs: BucketRef[],
  debit: number,
): Promise<Pick<RateLimitBucketRow, "subject" | "limiter" | "tokens">[]> {
  const level = `least(cast(:capacity as float8),
      b.tokens + greatest(0, cast(extract(epoch from excluded.updated_at - b.updated_at) as float8)) * cast(:rate as float8))`;
  const { subjects, limiters, capacities, rates } = columns(refs);
  const out: Pick<RateLimitBucketRow, "subject" | "limiter" | "tokens">[] = [];
  for (let i = 0; i < subjects.length; i++) {
    const { rows } = await db.raw<{ rows: Pick<RateLimitBucketRow, "subject" | "limiter" | "tokens">[] }>(
      `insert into ${TABLES.rateLimitBuckets} as b (subject, limiter, tokens, allowed, updated_at)
       values (:subject, :limiter, cast(:capacity as float8) - :debit, true, clock_timestamp())
       on conflict (subject, limiter) do update set
         tokens = ${level} - :debit,
         allowed = true,
         updated_at = greatest(b.updated_at, excluded.updated_at)
       returning subject, limiter, tokens`,
      { subject: subjects[i], limiter: limiters[i], capacity: capacities[i], rate: rates[i], debit },
    );
    out.push(rows[0]);
  }
  return out;
}
