// Builds the OpenAPI 3.1 document from the route registry and the zod schemas that validate
// requests (z.toJSONSchema, JSON Schema 2020-12, the dialect OpenAPI 3.1 uses).
import { z } from "zod";
import { apiSchemas } from "./api/shared/schemas.js";
import type { ErrorResponseSpec, Route } from "./route-registry.js";

type Json = Record<string, unknown>;

const REF = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** The error catalog: status → description, component schema and response headers. */
const ERROR_RESPONSES: Record<number, { description: string; schema: string; headers?: Record<string, string> }> = {
  400: {
    description:
      "Bad request, e.g. an empty chat message, a body that ended early, or a path parameter that is not valid percent-encoding.",
    schema: "HTTPError",
  },
  401: { description: "Missing or invalid API key, or a malformed Authorization header.", schema: "HTTPError" },
  403: { description: "The resource belongs to someone else.", schema: "HTTPError" },
  404: { description: "Unknown, or not the caller's.", schema: "HTTPError" },
  409: { description: "The resource's state forbids the action.", schema: "HTTPError" },
  413: { description: "The request body is over the application cap.", schema: "RequestTooLargeError" },
  415: {
    description:
      "Unsupported upload type (the detail lists the supported extensions), or a Content-Type or Content-Encoding the route does not accept (the detail names the header and the accepted values).",
    schema: "UnsupportedMediaTypeError",
  },
  422: { description: "Validation error.", schema: "HTTPValidationError" },
  429: {
    description:
      "Monthly operations quota exhausted (code quota_exhausted); the rate limit of the route's class (code rate_limited, bucket key or account: the API key's, or all the account's keys together); or too many requests with a missing or invalid key (code auth_rate_limited) or without a key (code anonymous_rate_limited) from the client's address.",
    schema: "QuotaExceededError",
    headers: {
      "Retry-After": "Seconds to wait before retrying.",
      RateLimit: 'Rate limits only: e.g. "write";r=0;t=12, "write-account";r=3;t=5.',
      "X-Usage-Limit": "Monthly operations quota.",
      "X-Usage-Used": "Operations used this period.",
      "X-Usage-Remaining": "Operations left this period.",
    },
  },
  500: { description: "Unexpected error.", schema: "HTTPError" },
  503: { description: "A backing service is unavailable; retry shortly.", schema: "HTTPError" },
  504: { description: "Synchronous AI processing passed the wall-clock cap.", schema: "HTTPError" },
};

function cleanSchema(schema: Json): Json {
  const { $schema: _s, $id: _i, id: _id, ...rest } = schema;
  return rest;
}

function inlineSchema(schema: z.ZodType): Json {
  return cleanSchema(
    z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io: "input",
      unrepresentable: "any",
    }) as Json,
  );
}

function headersObject(headers: Record<string, string> | undefined): Json | undefined {
  if (!headers) return undefined;
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: "string" } }]),
  );
}

function schemaRef(schema: z.ZodType): Json {
  const id = apiSchemas.get(schema)?.id;
  return id ? REF(id) : inlineSchema(schema);
}

function parameters(route: Route): Json[] {
  const out: Json[] = [];
  const add = (where: "path" | "query", object: z.ZodObject | undefined) => {
    if (!object) return;
    for (const [name, field] of Object.entries(object.shape) as [string, z.ZodType][]) {
      const schema = inlineSchema(field);
      const { description, ...rest } = schema;
      out.push({
        name,
        in: where,
        required: where === "path" || !field.safeParse(undefined).success,
        ...(typeof description === "string" && { description }),
        schema: rest,
      });
    }
  };
  add("path", route.params);
  add("query", route.query);
  if (route.idempotent) {
    out.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "1-255 printable ASCII characters, unique per request, kept 24 h per account: a retry with the same key and body answers the first response (Idempotent-Replayed: true) and is charged once; another body → 422; while the first still runs → 409.",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    });
  }
  return out;
}

function errorResponse(spec: ErrorResponseSpec): [string, Json] {
  if (typeof spec === "number") {
    const entry = ERROR_RESPONSES[spec] ?? ERROR_RESPONSES[500];
    return [
      String(spec),
      {
        description: entry.description,
        ...(entry.headers && { headers: headersObject(entry.headers) }),
        content: { "application/json": { schema: REF(entry.schema) } },
      },
    ];
  }
  return [
    String(spec.status),
    { description: spec.description, content: { "application/json": { schema: schemaRef(spec.schema) } } },
  ];
}

/** The rate-limit headers of every response of a keyed route (draft-ietf-httpapi-ratelimit-headers-10). */
const RATE_LIMIT_HEADERS: Record<string, string> = {
  "RateLimit-Policy":
    'The route\'s rate-limit class and policy, e.g. "expensive";q=600;w=60 (requests per window in seconds, per API key).',
  RateLimit: 'What is left of it, e.g. "expensive";r=599;t=1 (requests left; seconds until the bucket is full).',
};

function operation(route: Route): Json {
  const successHeaders = { ...(route.limiter && RATE_LIMIT_HEADERS), ...route.response.headers };
  const responses: Json = {
    [String(route.response.status)]: {
      description: route.response.description,
      ...(Object.keys(successHeaders).length > 0 && { headers: headersObject(successHeaders) }),
      content: { "application/json": { schema: schemaRef(route.response.schema) } },
    },
  };
  for (const spec of route.errors) {
    const [status, response] = errorResponse(spec);
    responses[status] = response;
  }
  const params = parameters(route);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description && { description: route.description }),
    tags: route.tags,
    ...(params.length > 0 && { parameters: params }),
    ...(route.body && {
      requestBody: {
        required: true,
        content: { [route.bodyMediaType ?? "application/json"]: { schema: schemaRef(route.body) } },
      },
    }),
    responses,
    security: route.auth ? [{ HTTPBearer: [] }] : [],
  };
}

/** Document metadata. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

/**
 * The OpenAPI 3.1.0 document of `routes`: one operation per route (parameters, request body,
 * success and error responses), component schemas from the `apiSchemas` registry, and the
 * HTTP bearer security scheme.
 */
export function buildOpenApi(routes: Route[], info: OpenApiInfo): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method] = operation(route);
  }
  const components = z.toJSONSchema(apiSchemas, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const schemas = Object.fromEntries(Object.entries(components.schemas).map(([id, s]) => [id, cleanSchema(s)]));
  return {
    openapi: "3.1.0",
    info,
    paths,
    components: {
      schemas,
      securitySchemes: {
        HTTPBearer: { type: "http", scheme: "bearer", description: "Authorization: Bearer <API_KEY> (sk_ + 32 hex)." },
      },
    },
  };
}
