// The caller's user account as the API shows it (GET and PATCH /v1/users/me): its ids and the
// email on file, where email exports without recipient_email are sent. "Me" is the key's user,
// also for organization keys: the email belongs to a person, not to the organization.
import { InputError, isEmailAddress, type Knex, NotFoundError, type Principal } from "@redline/service-kit";
import { findAccount, setAccountEmail } from "../db/store/accounts.js";
import type { AccountRow } from "../db/tables.js";

/** A user account: ids of the principal and the email on file ("" when none). */
export interface UserAccountView {
  userId: string;
  organizationId: string;
  email: string;
}

function view(principal: Principal, row: AccountRow): UserAccountView {
  return { userId: principal.userId, organizationId: principal.organizationId, email: row.email ?? "" };
}

/** The caller's user account; NotFoundError (404) when the key's user no longer exists. */
export async function getUserAccount(db: Knex, principal: Principal): Promise<UserAccountView> {
  const row = await findAccount(db, principal.userId);
  if (!row) throw new NotFoundError("Account not found");
  return view(principal, row);
}

/**
 * Sets the caller's email on file to `email` (trimmed), or clears it when `email` is empty.
 * InputError (400) for anything but one plain address of at most 254 characters (isEmailAddress);
 * NotFoundError (404) when the key's user no longer exists.
 */
export async function setUserEmail(db: Knex, principal: Principal, email: string): Promise<UserAccountView> {
  const address = email.trim();
  if (address && !isEmailAddress(address))
    throw new InputError("email is not a valid email address: one plain address such as name@example.com");
  const row = await setAccountEmail(db, principal.userId, address || null);
  if (!row) throw new NotFoundError("Account not found");
  return view(principal, row);
}
