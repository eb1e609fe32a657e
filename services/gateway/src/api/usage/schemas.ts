// GET /v1/usage (interface-spec usage object and Limits): the usage object of the caller's owner
// with its billing period and latest charges. The period and charge list are ours to design.
import { z } from "zod";
import { BUCKETS, component, UsageSchema } from "../shared/schemas.js";

/** One charge of the recent list. */
export const RecentChargeSchema = component("RecentCharge", {
  ops: z.number().int().meta({ description: "Operations held (reserved) or billed (settled)." }),
  state: z.enum(["reserved", "settled"]).meta({ description: "reserved while the turn runs, then settled." }),
  bucket_used: z.enum(BUCKETS).meta({ description: "The bucket that paid first." }),
  created_at: z.string().meta({ format: "date-time", description: "When the operations were reserved (ISO 8601)." }),
});

/** GET /v1/usage answer: the usage object (nothing charged) + period bounds + recent charges. */
export const UsageReportSchema = component("UsageReport", {
  ...UsageSchema.shape,
  period_start: z
    .string()
    .meta({ format: "date-time", description: "Start of the current billing period (the account's anchor day)." }),
  period_end: z.string().meta({ format: "date-time", description: "When the monthly quota resets (ISO 8601)." }),
  recent_charges: z
    .array(RecentChargeSchema)
    .meta({ description: "The latest 20 charges holding or billing operations, newest first." }),
});

export type UsageReportJson = z.output<typeof UsageReportSchema>;
