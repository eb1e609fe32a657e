// billing.v1.GetUsageResponse → the UsageReport JSON.
import type { billingV1 } from "@redline/grpc-stubs";
import { iso, usageToJson } from "../shared/mappers.js";
import type { UsageReportJson } from "./schemas.js";

/** The usage object of `res` with period bounds (ISO 8601) and the recent charges. */
export function usageReportToJson(res: billingV1.GetUsageResponse, plan: string): UsageReportJson {
  return {
    ...usageToJson(res.usage, plan),
    period_start: iso(res.usage?.periodStart) ?? "",
    period_end: iso(res.usage?.periodEnd) ?? "",
    recent_charges: res.charges.map((charge) => ({
      ops: charge.ops,
      state: charge.state === "reserved" ? "reserved" : "settled",
      bucket_used: charge.bucketUsed === "promotion" || charge.bucketUsed === "overage" ? charge.bucketUsed : "monthly",
      created_at: iso(charge.createdAt) ?? "",
    })),
  };
}
