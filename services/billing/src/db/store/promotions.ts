// Promotion codes and the grants their redemptions give: all SQL of promotions. Functions take a
// `Knex` or a transaction; commands/promotions.ts opens the transaction a redemption needs.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { type PromotionGrantRow, type PromotionRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** Stores a new promotion; the row as stored. Throws a unique violation when the code exists. */
export async function insertPromotion(
  db: Db,
  promotion: Pick<PromotionRow, "code" | "name" | "ops" | "expires_at" | "max_redemptions">,
): Promise<PromotionRow> {
  const [row] = await db<PromotionRow>(TABLES.promotions)
    .insert({ id: randomUUID(), ...promotion })
    .returning("*");
  return row;
}

/** The promotion whose code matches case-insensitively, locked FOR UPDATE (redemptions queue on it). */
export function lockPromotionByCode(db: Knex.Transaction, code: string): Promise<PromotionRow | undefined> {
  return db<PromotionRow>(TABLES.promotions).whereRaw("lower(code) = lower(?)", [code]).forUpdate().first();
}

/** The owner's grant of the promotion, if it redeemed it before (expired or spent included). */
export function findGrant(db: Db, ownerId: string, promotionId: string): Promise<PromotionGrantRow | undefined> {
  return db<PromotionGrantRow>(TABLES.promotionGrants).where({ owner_id: ownerId, promotion_id: promotionId }).first();
}

/** A grant of the promotion counted against the person (beneficiary), for any of their accounts. */
export function findGrantOfPerson(
  db: Db,
  beneficiaryId: string,
  promotionId: string,
): Promise<PromotionGrantRow | undefined> {
  return db<PromotionGrantRow>(TABLES.promotionGrants)
    .where({ beneficiary_id: beneficiaryId, promotion_id: promotionId })
    .first();
}

/** Records a redemption: the grant for the owner, counted against the person, and one more redemption on the promotion. */
export async function insertGrant(
  db: Db,
  ownerId: string,
  beneficiaryId: string,
  promotion: PromotionRow,
): Promise<PromotionGrantRow> {
  const [grant] = await db<PromotionGrantRow>(TABLES.promotionGrants)
    .insert({
      id: randomUUID(),
      owner_id: ownerId,
      beneficiary_id: beneficiaryId,
      promotion_id: promotion.id,
      name: promotion.name,
      ops_granted: promotion.ops,
      ops_remaining: promotion.ops,
      expires_at: promotion.expires_at,
    })
    .returning("*");
  await db(TABLES.promotions).where({ id: promotion.id }).increment("redemptions", 1);
  return grant;
}
