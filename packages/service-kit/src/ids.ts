// One pattern for the UUIDs Redline stores as ids (documents, versions, accounts, keys...), so a
// string every service refuses before a query never reaches a Postgres uuid column.

/** A UUID of any version, either case: 8-4-4-4-12 hex digits. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a UUID string (UUID_PATTERN); anything else cannot name a stored row. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** The distinct UUIDs of `ids`, in first-seen order: the ones a uuid column can be asked for. */
export function uuidsOf(ids: string[]): string[] {
  return [...new Set(ids.filter(isUuid))];
}
