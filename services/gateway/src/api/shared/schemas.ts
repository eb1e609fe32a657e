// Schema pieces every area shares: the `apiSchemas` registry of named OpenAPI components, the
// bounds of every request field, ids, query and form coercions, base64 and file parts, the change
// record and usage objects, and the error bodies of the error catalog (interface-spec, Errors).
import { isEmailAddress, MAX_EMAIL_CHARS } from "@redline/service-kit";
import { z } from "zod";
import type { UploadedFile } from "../../body.js";
import { issueType } from "../../validation.js";

/**
 * Named component schemas of the OpenAPI document (`#/components/schemas/<id>`). Descriptions
 * live in zod's global metadata (`.meta()`), which z.toJSONSchema reads for every schema.
 */
export const apiSchemas = z.registry<{ id: string }>();

/** An object schema registered as the OpenAPI component `id` (`#/components/schemas/<id>`). */
export function component<Shape extends z.core.$ZodLooseShape>(id: string, shape: Shape) {
  return z.object(shape).register(apiSchemas, { id });
}

/**
 * One plain email address, trimmed (service-kit isEmailAddress, at most MAX_EMAIL_CHARS): the
 * rule of every address a request gives. Anything else is a 422 value_error.
 */
export const emailAddress = z
  .string()
  .trim()
  .max(MAX_EMAIL_CHARS)
  .refine(isEmailAddress, {
    message: "value is not a valid email address: one plain address such as name@example.com",
    ...issueType("value_error"),
  });

/** Session ids chosen by callers: letters, digits, `_`, `-`, `.`; at most 256 (Limits). */
export const SESSION_ID_PATTERN = /^[a-zA-Z0-9_\-.]+$/;

// Bounds of every request field (query, path, body), so that a value is refused with a 422
// before any write instead of failing in a service or column after the turn was billed.
/** Longest id of any kind (session, document, job, memory key...), as the spec's session_id. */
export const MAX_ID_CHARS = 256;

/** Longest name, title or file name. */
export const MAX_NAME_CHARS = 512;

/** Longest short free text (a selection, feedback, an instruction). */
export const MAX_TEXT_CHARS = 100_000;

/**
 * Longest HTML or base64 document in a JSON body: the 100 MB application body cap (Limits) is
 * the real bound; this documents it in the schema.
 */
export const MAX_DOCUMENT_CHARS = 100 * 1024 * 1024;

/** Largest value of a proto int32 field (turn_index, offset, limits). */
export const INT32_MAX = 2_147_483_647;

/** Largest int64 value a JSON number carries exactly (sequences, cursors, sizes). */
export const INT64_JSON_MAX = Number.MAX_SAFE_INTEGER;

/** A caller-chosen session id: SESSION_ID_PATTERN, at most MAX_ID_CHARS. */
export const sessionId = z.string().max(MAX_ID_CHARS).regex(SESSION_ID_PATTERN);

const BASE64_BODY = /^[A-Za-z0-9+/_-]*={0,2}$/;

const DATA_URL_PREFIX = /^data:[^,]*;base64,/i;

/** Strips whitespace (MIME line breaks) and, when `allowDataUrl`, a `data:<type>;base64,` prefix. */
export function normalizeBase64(value: string, allowDataUrl = false): string {
  const body = allowDataUrl ? value.replace(DATA_URL_PREFIX, "") : value;
  return body.replace(/\s+/g, "");
}

/** True for standard or URL-safe base64, padded or not. */
export function isBase64(value: string, allowDataUrl = false): boolean {
  const s = normalizeBase64(value, allowDataUrl);
  if (!BASE64_BODY.test(s)) return false;
  const unpadded = s.replace(/=+$/, "");
  if (unpadded.length % 4 === 1) return false;
  return s.length === unpadded.length || s.length % 4 === 0;
}

/** A non-empty base64 string (standard or URL-safe; with `allowDataUrl` a data: URL), 422 base64_decode otherwise. */
export const base64String = (allowDataUrl: boolean, description: string) =>
  z
    .string()
    .min(1)
    .max(MAX_DOCUMENT_CHARS)
    .refine((s) => isBase64(s, allowDataUrl), {
      message: "Base64 decoding error: invalid base64 data",
      ...issueType("base64_decode"),
    })
    .meta({ description, contentEncoding: "base64" });

/** Query integers: strict decimal strings become numbers; anything else fails as int_parsing. */
export function queryInt(value: unknown): unknown {
  return typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : value;
}

/** Query booleans: true/false/1/0 (any case, as well as yes/no/on/off); anything else fails as bool_parsing. */
export function queryBool(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  return value;
}

/** Path of the per-session routes. */
export const SessionPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
});

/** A change record (unshown-parts.md, Change records). */
export const ChangeRecordSchema = z
  .object({
    change_id: z.string(),
    operation: z.enum(["edit", "create", "delete"]),
    chunk_id: z.string(),
    document_id: z.string(),
    old_html: z.string(),
    new_html: z.string(),
    ai_explanation: z.string(),
    insert_after_chunk_id: z
      .string()
      .optional()
      .meta({ description: "For create: the chunk the new one follows; left out at the start of the document." }),
  })
  .meta({ description: "One applied or proposed chunk change." })
  .register(apiSchemas, { id: "ChangeRecord" });

export type ChangeRecordJson = z.output<typeof ChangeRecordSchema>;

/** A promotion entry of the usage object: a live grant, spent before the monthly bucket. */
export const PromotionSchema = component("Promotion", {
  redemption_id: z.string().meta({ description: "The redemption; usage.redemption_id names it when it paid." }),
  name: z.string(),
  ops_remaining: z.number().int(),
  ops_granted: z.number().int(),
  expires_at: z.string().meta({ format: "date-time", description: "When the grant stops counting (ISO 8601)." }),
});

/** Which bucket paid for an operation (the first one drawn from when a charge spans buckets). */
export const BUCKETS = ["promotion", "monthly", "overage", "none"] as const;

/** The usage object (interface-spec, Resources). */
export const UsageSchema = z
  .object({
    monthly_used: z.number().int(),
    monthly_limit: z.number().int(),
    monthly_remaining: z.number().int(),
    was_billable: z.boolean(),
    ops_charged: z.number().int(),
    quota_exhausted: z.boolean(),
    subscription_tier: z.string(),
    bucket_used: z.enum(BUCKETS).meta({
      description:
        "The bucket that paid: a promotion grant (the one expiring first), the monthly quota, overage (plans " +
        "that allow it), or none (nothing charged). A charge spanning buckets names the first it drew from.",
    }),
    redemption_id: z.string().optional().meta({ description: "Only when a promotion paid for the operation." }),
    promotions: z.array(PromotionSchema).meta({ description: "Live promotion grants, soonest expiry first." }),
  })
  .meta({ description: "Monthly operations usage after the request." })
  .register(apiSchemas, { id: "Usage" });

export type UsageJson = z.output<typeof UsageSchema>;

/** `{detail: string}` (interface-spec, Errors). */
export const ErrorSchema = z
  .object({ detail: z.string() })
  .catchall(z.unknown())
  .meta({ description: "Error body; some errors add fields such as code." })
  .register(apiSchemas, { id: "HTTPError" });

/** One validation item. */
export const ValidationIssueSchema = component("ValidationError", {
  type: z.string(),
  loc: z.array(z.union([z.string(), z.number().int()])),
  msg: z.string(),
});

/** 422 body. */
export const ValidationErrorSchema = component("HTTPValidationError", { detail: z.array(ValidationIssueSchema) });

/** 413 body (Errors rule 5). */
export const RequestTooLargeSchema = component("RequestTooLargeError", {
  detail: z.string(),
  error_code: z.literal("request_too_large"),
  message_user: z.string(),
  request_size_mb: z.number(),
  max_size_mb: z.number(),
  suggested_action: z.literal("split_request"),
  contact_email: z.string(),
  support_event_id: z.string(),
});

/** 415 body (Errors rule 1). */
export const UnsupportedMediaTypeSchema = component("UnsupportedMediaTypeError", {
  detail: z.string().meta({ description: "Names the supported extensions." }),
  code: z.string().optional(),
  supported_extensions: z.array(z.string()).optional(),
});

/** 429 body (Errors rule 2); Retry-After and X-Usage-* headers come with it. */
export const QuotaExceededSchema = component("QuotaExceededError", {
  detail: z.string(),
  code: z.string().optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
});

/** Largest serialized JSON of one free-form object (editor action details, page setup), in bytes. */
export const MAX_DETAILS_JSON_BYTES = 4096;

/** A free-form JSON object bounded to MAX_DETAILS_JSON_BYTES once serialized (422 naming the field). */
export const boundedRecord = (description: string) =>
  z
    .record(z.string().max(MAX_ID_CHARS), z.unknown())
    .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= MAX_DETAILS_JSON_BYTES, {
      message: `Value error, must serialize to at most ${MAX_DETAILS_JSON_BYTES} bytes of JSON`,
      ...issueType("too_long"),
    })
    .meta({ description: `${description} At most ${MAX_DETAILS_JSON_BYTES} bytes as JSON.` });

/** A boolean query flag (see queryBool), `fallback` when absent. */
export const queryFlag = (fallback: boolean, description: string) =>
  z.preprocess(queryBool, z.boolean().default(fallback)).meta({ description });

/** A page-size query parameter: an integer 1..`max`, `fallback` when absent (422 otherwise). */
export const pageLimit = (fallback: number, max = 200) =>
  z.preprocess(queryInt, z.number().int().min(1).max(max).default(fallback));

/**
 * A page-size query parameter where the spec sets no bound: an integer 1..`max`, `fallback` when
 * absent; a larger value is clamped to `max` instead of refused (0, negatives, non-integers: 422).
 */
export const clampedPageLimit = (fallback: number, max = 200) =>
  z.preprocess((v) => {
    const n = queryInt(v);
    return typeof n === "number" && n > max ? max : n;
  }, z.number().int().min(1).max(max).default(fallback));

/** An offset query parameter: an int32 of at least 0, default 0. */
export const pageOffset = z
  .preprocess(queryInt, z.number().int().min(0).max(INT32_MAX).default(0))
  .meta({ description: "At least 0 (an int32)." });

/** The old `user_id` field, still accepted and ignored: the API key decides scope (interface-spec, Authentication). */
export const deprecatedUserId = (nullable: boolean) =>
  (nullable ? z.string().max(MAX_ID_CHARS).nullish() : z.string().max(MAX_ID_CHARS).optional()).meta({
    description: "Deprecated and ignored: the API key decides scope.",
  });

/** A document named by its session slot id or its durable UUID. */
export const documentRef = z
  .string()
  .min(1)
  .max(MAX_ID_CHARS)
  .meta({ description: "Session slot id or durable document UUID." });

/** A whole file as base64 in a JSON body (uploads, attachments, templates). */
export const base64File = z
  .string()
  .min(1)
  .max(MAX_DOCUMENT_CHARS)
  .refine((s) => isBase64(s), { message: "Base64 decoding error: invalid base64 data", ...issueType("base64_decode") })
  .meta({ description: "The file's bytes, base64 encoded.", contentEncoding: "base64" });

/** Form booleans: true/false/1/0/yes/no/on/off; JSON booleans pass. */
export function formBool(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off", ""].includes(v)) return false;
  return value;
}

/** The multipart `file` part as parsed by body.ts; its file name bounded to MAX_NAME_CHARS. */
export const uploadedFile = z
  .custom<UploadedFile>((v) => typeof v === "object" && v !== null && Buffer.isBuffer((v as UploadedFile).content), {
    message: "Field required: a file part named 'file'",
  })
  .refine((f) => f.filename.length <= MAX_NAME_CHARS, {
    message: `String should have at most ${MAX_NAME_CHARS} characters`,
    path: ["filename"],
    ...issueType("string_too_long"),
  })
  .meta({ description: "The file (multipart part `file`).", type: "string", format: "binary" });
