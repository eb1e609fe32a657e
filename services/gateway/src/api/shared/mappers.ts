// Mappers every area shares: timestamps, change records, the usage object and its X-Usage-*
// headers, and chunks back to HTML (interface-spec, Resources).
import { type billingV1, type commonV1, type documentsV1, NullValue } from "@redline/grpc-stubs";
import { RedlineError } from "@redline/service-kit";
import type { RouteCall } from "../../route-registry.js";
import { BUCKETS, type ChangeRecordJson, type UsageJson } from "./schemas.js";

/** ISO 8601 of a proto timestamp; undefined (left out of the JSON) when unset. */
export function iso(date: Date | undefined): string | undefined {
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined;
}

const OPERATIONS: readonly string[] = ["edit", "create", "delete"];

function isOperation(value: string): value is ChangeRecordJson["operation"] {
  return OPERATIONS.includes(value);
}

/** A change record in snake_case; `insert_after_chunk_id` only on creates (left out at the start). */
export function changeRecordToJson(record: documentsV1.ChangeRecord): ChangeRecordJson {
  const operation = isOperation(record.operation) ? record.operation : "edit";
  return {
    change_id: record.changeId,
    operation,
    chunk_id: record.chunkId,
    document_id: record.documentId,
    old_html: record.oldHtml,
    new_html: record.newHtml,
    ai_explanation: record.aiExplanation,
    ...(operation === "create" && { insert_after_chunk_id: record.insertAfterChunkId || undefined }),
  };
}

function isBucket(value: string): value is UsageJson["bucket_used"] {
  return (BUCKETS as readonly string[]).includes(value);
}

/**
 * The spec's usage object; a missing usage (should not happen) reads as zeros on `plan`.
 * `redemption_id` only when a promotion paid (left out otherwise, never empty or null).
 */
export function usageToJson(usage: billingV1.Usage | undefined, plan: string): UsageJson {
  const bucket = usage && isBucket(usage.bucketUsed) ? usage.bucketUsed : "none";
  return {
    monthly_used: usage?.monthlyUsed ?? 0,
    monthly_limit: usage?.monthlyLimit ?? 0,
    monthly_remaining: usage?.monthlyRemaining ?? 0,
    was_billable: usage?.wasBillable ?? false,
    ops_charged: usage?.opsCharged ?? 0,
    quota_exhausted: usage?.quotaExhausted ?? false,
    subscription_tier: usage?.subscriptionTier || plan,
    bucket_used: bucket,
    ...(bucket === "promotion" && usage?.redemptionId && { redemption_id: usage.redemptionId }),
    promotions: (usage?.promotions ?? []).map((grant) => ({
      redemption_id: grant.redemptionId,
      name: grant.name,
      ops_remaining: grant.opsRemaining,
      ops_granted: grant.opsGranted,
      expires_at: iso(grant.expiresAt) ?? "",
    })),
  };
}

/** The OpenAPI description of the X-Usage-* headers every billable endpoint answers with. */
export const USAGE_HEADER_DOCS = {
  "X-Usage-Limit": "Monthly operations quota.",
  "X-Usage-Used": "Operations used this period.",
  "X-Usage-Remaining": "Operations left this period.",
} as const;

/** An `answers(...)` declaration with the X-Usage-* headers documented on its success response. */
export function withUsageHeaders<A extends { response: object }>(declared: A): A {
  return { ...declared, response: { ...declared.response, headers: USAGE_HEADER_DOCS } };
}

/** X-Usage-Limit, X-Usage-Used and X-Usage-Remaining for a usage object (Errors rule 2). */
export function usageHeaders(usage: UsageJson): Record<string, string> {
  return {
    "X-Usage-Limit": String(usage.monthly_limit),
    "X-Usage-Used": String(usage.monthly_used),
    "X-Usage-Remaining": String(usage.monthly_remaining),
  };
}

/**
 * Rethrows `err`, adding the caller's X-Usage-* to an application 429 (interface-spec, Errors
 * rule 2) that a service raised without them (its mail caps do not know the monthly usage); the
 * error's own headers win, and without billing the 429 goes as it is. Use as `.catch(usageOn429(call))`.
 */
export function usageOn429(call: RouteCall): (err: unknown) => Promise<never> {
  return async (err) => {
    if (!(err instanceof RedlineError) || err.httpStatus !== 429 || err.headers?.["X-Usage-Limit"]) throw err;
    let headers: Record<string, string>;
    try {
      const { usage } = await call.ctx.billing.getUsage({}, call.rpc());
      headers = { ...usageHeaders(usageToJson(usage, call.principal?.plan ?? "")), ...err.headers };
    } catch {
      throw err;
    }
    throw new RedlineError(err.httpStatus, err.grpcCode, err.detail, { body: err.body, headers });
  };
}

/** The HTML of a document: its chunks' outer HTML joined with "\n" (chunk ids kept). */
export function chunksToHtml(chunks: documentsV1.Chunk[]): string {
  return chunks.map((c) => c.html).join("\n");
}

/** Margins in inches, in the member order Postgres jsonb gives them (shorter keys first). */
export type PageMarginsJson = {
  top: number;
  left: number;
  right: number;
  bottom: number;
};

/**
 * The HTTP `page_setup` object: `size` a paper name or `{width, height}` in inches, `margins` a
 * preset name, `{top, right, bottom, left}` in inches or null, `orientation` "portrait" or
 * "landscape". A key is absent when the page setup does not set it.
 */
export type PageSetupJson = {
  size?: string | { width: number; height: number };
  margins?: string | PageMarginsJson | null;
  orientation?: string;
};

/**
 * A proto PageSetup as the HTTP `page_setup`; null when absent. Members come in the order Postgres
 * jsonb stores them (size, margins, orientation; width, height; top, left, right, bottom), so a
 * stored page setup reads back byte for byte as it did when the JSON travelled as a string.
 */
export function pageSetupToJson(p: commonV1.PageSetup | undefined): PageSetupJson | null {
  if (!p) return null;
  const json: PageSetupJson = {};
  if (p.sizeName !== undefined) json.size = p.sizeName;
  else if (p.sizeInches) json.size = { width: p.sizeInches.width, height: p.sizeInches.height };
  if (p.marginsName !== undefined) json.margins = p.marginsName;
  else if (p.marginsInches) {
    const { top, left, right, bottom } = p.marginsInches;
    json.margins = { top, left, right, bottom };
  } else if (p.marginsNull !== undefined) json.margins = null;
  if (p.orientation !== undefined) json.orientation = p.orientation;
  return json;
}

/** The proto PageSetup of a validated HTTP `page_setup` object (a key left out stays unset). */
export function pageSetupFromJson(json: PageSetupJson): commonV1.PageSetup {
  const { size, margins, orientation } = json;
  return {
    ...(typeof size === "string" ? { sizeName: size } : size && { sizeInches: size }),
    ...(orientation !== undefined && { orientation }),
    ...(margins === null
      ? { marginsNull: NullValue.NULL_VALUE }
      : typeof margins === "string"
        ? { marginsName: margins }
        : margins && { marginsInches: margins }),
  };
}
