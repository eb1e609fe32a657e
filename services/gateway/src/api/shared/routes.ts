// The head every route declaration shares, on one line: "GET /v1/jobs/{job_id}" reads as the
// spec writes an endpoint, and the tag and auth follow from it.
import type { z } from "zod";
import type { ErrorResponseSpec, HttpMethod } from "../../route-registry.js";

/**
 * The method, path, operation id, summary, tag and auth of a defineRoute declaration, from
 * `"<METHOD> <path>"` (e.g. `"GET /v1/jobs/{job_id}"`). Every /v1 route takes the API key
 * (interface-spec, Authentication); other paths (/health, /openapi.json) are public.
 */
export function endpoint(
  line: `${Uppercase<HttpMethod>} /${string}`,
  operationId: string,
  summary: string,
  tag: string,
) {
  const [method, path] = line.split(" ") as [Uppercase<HttpMethod>, string];
  return {
    method: method.toLowerCase() as HttpMethod,
    path,
    operationId,
    summary,
    tags: [tag],
    auth: path.startsWith("/v1/"),
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
