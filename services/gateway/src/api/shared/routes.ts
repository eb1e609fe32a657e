// The head every route declaration shares, on one line: "GET /v1/jobs/{job_id}" reads as the
// spec writes an endpoint, and the tag and auth follow from it.
import type { z } from "zod";
import type { LimiterClass } from "../../config.js";
import type { ErrorResponseSpec, HttpMethod } from "../../route-registry.js";

/** What a route declares about rate limits and retries beyond its method and path. */
export interface EndpointTraits {
  /** The rate-limit class; default `read` for GET, `write` for other methods. */
  limiter?: LimiterClass;
  /** Honours Idempotency-Key (chat, uploads, re-edit: the requests a client retries after a timeout). */
  idempotent?: boolean;
}

/** The traits of the expensive routes (model or converter work): `expensive` class, Idempotency-Key. */
export const EXPENSIVE_IDEMPOTENT: EndpointTraits = { limiter: "expensive", idempotent: true };
/** The `expensive` class without Idempotency-Key (exports, continuing a paused job). */
export const EXPENSIVE: EndpointTraits = { limiter: "expensive" };

/**
 * The method, path, operation id, summary, tag, auth and rate-limit class of a defineRoute
 * declaration, from `"<METHOD> <path>"` (e.g. `"GET /v1/jobs/{job_id}"`). Every /v1 route takes
 * the API key (interface-spec, Authentication) and so has a limiter class (`traits.limiter`, else
 * read for GET and write otherwise); other paths (/health, /openapi.json) are public and unlimited.
 */
export function endpoint(
  line: `${Uppercase<HttpMethod>} /${string}`,
  operationId: string,
  summary: string,
  tag: string,
  traits: EndpointTraits = {},
) {
  const [method, path] = line.split(" ") as [Uppercase<HttpMethod>, string];
  const auth = path.startsWith("/v1/");
  const limiter: LimiterClass | undefined = auth
    ? (traits.limiter ?? (method === "GET" ? "read" : "write"))
    : undefined;
  return {
    method: method.toLowerCase() as HttpMethod,
    path,
    operationId,
    summary,
    tags: [tag],
    auth,
    limiter,
    idempotent: traits.idempotent ?? false,
  };
}

/** The success response of a route: its description, or the description with a status other than 200. */
type Answer = string | { status: number; description: string };

/**
 * The success schema and the documented error statuses of a defineRoute declaration, on one
 * line: `...answers(JobSchema, "The job.", [404, 409])`.
 */
export function answers<R extends z.ZodType>(schema: R, answer: Answer, errors: ErrorResponseSpec[] = []) {
  const response = typeof answer === "string" ? { description: answer } : answer;
  return { response: { ...response, schema }, errors };
}
