// The caller's identity between services. The gateway resolves the API key once and puts the
// principal in gRPC metadata; services trust it because they listen on the internal network only.
import type { Metadata } from "@grpc/grpc-js";

/** Who is calling: the user, the organization the key acts for, and the owner of their rows. */
export interface Principal {
  userId: string;
  /** Empty for personal keys. */
  organizationId: string;
  /** organizationId when set, else userId: every row is owned by this id. */
  ownerId: string;
  plan: string;
  /**
   * The key's user as people read it (the account name given when the key was made); what a
   * human save is attributed to in version history and tracked changes. Absent when unknown.
   */
  userName?: string;
  /**
   * The id of the API key that made the request (never the key itself). Account commands that
   * must hold against a just-revoked key (auth answers are cached) check this key again.
   */
  keyId?: string;
}

const KEYS = {
  userId: "x-redline-user-id",
  organizationId: "x-redline-org-id",
  ownerId: "x-redline-owner-id",
  plan: "x-redline-plan",
  userName: "x-redline-user-name",
  keyId: "x-redline-key-id",
} as const;

/** Metadata key of the request id carried from the gateway through every hop. */
export const REQUEST_ID_KEY = "x-request-id";

/** Writes a principal into metadata. */
export function principalToMetadata(principal: Principal, md: Metadata): void {
  md.set(KEYS.userId, principal.userId);
  md.set(KEYS.organizationId, principal.organizationId);
  md.set(KEYS.ownerId, principal.ownerId);
  md.set(KEYS.plan, principal.plan);
  // Metadata values are ASCII: a name is carried percent-encoded.
  if (principal.userName) md.set(KEYS.userName, encodeURIComponent(principal.userName));
  if (principal.keyId) md.set(KEYS.keyId, principal.keyId);
}

/** Reads a principal from metadata; null when the call carries none (admin and health calls). */
export function principalFromMetadata(md: Metadata): Principal | null {
  const get = (key: string) => {
    const v = md.get(key)[0];
    return typeof v === "string" ? v : "";
  };
  const ownerId = get(KEYS.ownerId);
  if (!ownerId) return null;
  const principal: Principal = {
    userId: get(KEYS.userId),
    organizationId: get(KEYS.organizationId),
    ownerId,
    plan: get(KEYS.plan),
  };
  const userName = decodeName(get(KEYS.userName));
  if (userName) principal.userName = userName;
  const keyId = get(KEYS.keyId);
  if (keyId) principal.keyId = keyId;
  return principal;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return "";
  }
}
