// Promotion codes: operators create them (admin CLI), users redeem them once per person for a
// grant of operations that is spent before the monthly bucket until it expires (interface-spec
// usage object `promotions`; Errors: 404 unknown or expired, 409 conflicts). Codes are not
// credentials, so they are stored plain and compared case-insensitively.
import { randomInt } from "node:crypto";
import { ConflictError, InputError, type Knex, NotFoundError, type Principal } from "@redline/service-kit";
import { findAccount } from "../db/store/accounts.js";
import {
  findGrant,
  findGrantOfPerson,
  insertGrant,
  insertPromotion,
  lockPromotionByCode,
} from "../db/store/promotions.js";
import { getUsage, type UsageView } from "./quota.js";

/** Letters and digits that cannot be misread (no 0/O, 1/I/L). */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** A new code: three groups of four, e.g. "K7QM-2XPA-9HTR" (about 59 bits). */
export function newPromotionCode(): string {
  const group = () => Array.from({ length: 4 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
  return `${group()}-${group()}-${group()}`;
}

/** What an operator sets on a promotion. */
export interface PromotionInput {
  name: string;
  /** Operations each redemption grants, at least 1. */
  ops: number;
  /** When the code stops being redeemable and its grants stop counting. */
  expiresAt: Date;
  /** Redemptions allowed across all accounts; null = unlimited. */
  maxRedemptions: number | null;
}

/** Creates a promotion and returns its code. InputError (400) for a blank name, ops < 1, a past expiry. */
export async function createPromotion(db: Knex, input: PromotionInput, now: Date): Promise<string> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw new InputError("name is required (at most 200 characters)");
  if (!Number.isInteger(input.ops) || input.ops < 1) throw new InputError("ops must be an integer >= 1");
  if (Number.isNaN(input.expiresAt.getTime()) || input.expiresAt <= now)
    throw new InputError("expires must be a date in the future");
  if (input.maxRedemptions !== null && (!Number.isInteger(input.maxRedemptions) || input.maxRedemptions < 1))
    throw new InputError("max-redemptions must be an integer >= 1");
  // A clash of two random 59-bit codes is next to impossible; a retry makes it impossible to see.
  for (let attempt = 1; ; attempt += 1) {
    try {
      const row = await insertPromotion(db, {
        code: newPromotionCode(),
        name,
        ops: input.ops,
        expires_at: input.expiresAt,
        max_redemptions: input.maxRedemptions,
      });
      return row.code;
    } catch (err) {
      if (attempt >= 3 || !isCodeTaken(err)) throw err;
    }
  }
}

/** True for the unique violation of a promotion code already in use. */
function isCodeTaken(err: unknown): boolean {
  return err instanceof Error && "constraint" in err && err.constraint === "promotions_code_lower";
}

/**
 * The person a redemption for `principal`'s owner counts against (issue #30): the user for a
 * personal key; for an organization, the user who created it (an operator-made organization
 * counts as its own person). So "once per account" cannot be multiplied by creating organizations.
 */
async function beneficiaryOf(db: Knex | Knex.Transaction, principal: Principal): Promise<string> {
  if (!principal.organizationId) return principal.userId;
  const org = await findAccount(db, principal.organizationId);
  return org?.created_by ?? principal.organizationId;
}

/**
 * Redeems `code` for the caller's owner (the organization for organization keys) and returns
 * the usage with the new grant. Errors: InputError (400) blank code; NotFoundError (404) unknown
 * or expired code; ConflictError (409) already redeemed by this account or by its person (the
 * user, or the creator of the organization: once per person across the organizations they
 * created), or no redemptions left. The promotion row is locked, so parallel redemptions never
 * pass max_redemptions and one person's parallel redemptions count one at a time.
 */
export async function redeemPromotion(db: Knex, principal: Principal, code: string, now: Date): Promise<UsageView> {
  const wanted = code.trim();
  if (!wanted || wanted.length > 64) throw new InputError("code is required (at most 64 characters)");
  await db.transaction(async (trx) => {
    const promotion = await lockPromotionByCode(trx, wanted);
    if (!promotion) throw new NotFoundError("Unknown promotion code");
    // 404 like the spec's "unknown or expired" links: 410 is kept for what was disabled for good.
    if (promotion.expires_at <= now)
      throw new NotFoundError(`Promotion code expired on ${promotion.expires_at.toISOString()}`);
    if (await findGrant(trx, principal.ownerId, promotion.id))
      throw new ConflictError("This account has already redeemed this promotion code");
    const person = await beneficiaryOf(trx, principal);
    if (await findGrantOfPerson(trx, person, promotion.id))
      throw new ConflictError(
        "This promotion code was already redeemed once for you or an organization you created: once per person",
        { code: "already_redeemed_by_person" },
      );
    if (promotion.max_redemptions !== null && promotion.redemptions >= promotion.max_redemptions)
      throw new ConflictError(`Promotion code used up: all ${promotion.max_redemptions} redemptions are taken`);
    await insertGrant(trx, principal.ownerId, person, promotion);
  });
  return getUsage(db, principal, now);
}
