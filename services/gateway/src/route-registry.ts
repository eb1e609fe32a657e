// The route registry: each route is declared once with its zod schemas, and that declaration
// both mounts the Express handler (validate → handle → JSON) and produces its OpenAPI entry.
import {
  type CallOpts,
  InputError,
  type Logger,
  type Principal,
  SchemaError,
  type ValidationIssue,
} from "@redline/service-kit";
import type { z } from "zod";
import type { LimiterClass } from "./config.js";
import type { GatewayContext } from "./context.js";
import { type InputLocation, parseOrThrow } from "./validation.js";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** Default deadline of a gateway → service call. */
export const DEFAULT_RPC_TIMEOUT_MS = 10_000;

/** What a handler gets besides its validated input. */
export interface RouteCall {
  ctx: GatewayContext;
  requestId: string;
  log: Logger;
  /** The caller; null only on routes without auth. */
  principal: Principal | null;
  /**
   * The client's address (the unit of per-source limits such as agent sign-ups): the TCP peer,
   * or what the proxies GatewayConfig.trustProxy names report in X-Forwarded-For.
   */
  sourceAddress: string;
  /** The same for every retry of this request with its Idempotency-Key (retryKeyOf); else undefined. */
  retryKey?: string;
  /** Call options carrying the principal and request id, with a deadline (default 10 s). */
  rpc(timeoutMs?: number): CallOpts;
}

/**
 * A handler's reply: status (default the route's success status), JSON body, extra headers.
 * With `send`, the handler writes the response itself (file bytes, a server-sent event stream)
 * after status and headers are set; `body` is then only what OpenAPI documents.
 */
export interface RouteResult<T> {
  status?: number;
  body: T;
  headers?: Record<string, string>;
  send?: (res: import("express").Response) => Promise<void> | void;
}

/** A documented response other than the success one: a status from the error catalog, or a custom one. */
export type ErrorResponseSpec = number | { status: number; description: string; schema: z.ZodType };

type InputOf<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What names and documents a route, the same in RouteSpec and Route. */
interface RouteHead {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. "/v1/sessions/{session_id}/history". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Needs `Authorization: Bearer <key>` (every /v1 route). */
  auth: boolean;
  /** The rate-limit class of a keyed route (see endpoint()); absent on public routes. */
  limiter?: LimiterClass;
  /** Honours Idempotency-Key: a retry with the same key and body answers the first response. */
  idempotent?: boolean;
  /**
   * Not for web pages (cors.ts): answered without CORS headers, and a request carrying `Origin`
   * (which browsers always send on a cross-origin POST) is refused with 403 `browser_origin`.
   */
  refuseBrowsers?: boolean;
}

/** A route as written by its author; `handle` receives the parsed query, path and body. */
export interface RouteSpec<R extends z.ZodType, Q, P, B> extends RouteHead {
  /** Also accepts the key as `?api_key=` or `?token=` (browser EventSource streams). */
  queryKeyAuth?: boolean;
  /** What the route takes: path parameters, query and body, each validated before `handle` runs. */
  request?: { params?: P; query?: Q; body?: B };
  /** Media type of the body in OpenAPI (default application/json; uploads use multipart/form-data). */
  bodyMediaType?: string;
  response: {
    status?: number;
    description: string;
    schema: R;
    /** Response headers: name → description. */
    headers?: Record<string, string>;
  };
  /** Error statuses to document beyond the automatic ones (400 with params or a body, 401 with auth, 413 and 415 with a body, 422 with input). */
  errors?: ErrorResponseSpec[];
  handle(
    input: { query: InputOf<Q>; params: InputOf<P>; body: InputOf<B> },
    call: RouteCall,
  ): Promise<RouteResult<z.output<R>>>;
}

/** A registered route with its types erased: what the app mounts and the OpenAPI builder reads. */
export interface Route extends RouteHead {
  queryKeyAuth: boolean;
  query?: z.ZodObject;
  params?: z.ZodObject;
  body?: z.ZodType;
  bodyMediaType?: string;
  response: { status: number; description: string; schema: z.ZodType; headers?: Record<string, string> };
  errors: ErrorResponseSpec[];
  /** Validates raw input (422 on mismatch, in the order path, query, body) and runs the handler. */
  run(raw: { query: unknown; params: unknown; body: unknown }, call: RouteCall): Promise<RouteResult<unknown>>;
}

/** Declares a route; see RouteSpec. */
export function defineRoute<
  R extends z.ZodType,
  Q extends z.ZodObject | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<R, Q, P, B>): Route {
  const input = spec.request ?? {};
  const auto: ErrorResponseSpec[] = [];
  if (input.params || input.body) auto.push(400); // a path id that does not decode; a body cut short
  if (spec.auth) auto.push(401);
  if (input.body) auto.push(413, 415); // 415: a Content-Type or Content-Encoding the route does not take
  if (input.query || input.params || input.body || spec.idempotent) auto.push(422); // also an Idempotency-Key reused with another body
  if (spec.idempotent) auto.push(409); // a retry while the first request with its Idempotency-Key runs
  if (spec.limiter) auto.push(429); // the rate limit of the route's class
  if (spec.refuseBrowsers) auto.push(403); // browser_origin
  const statusOf = (e: ErrorResponseSpec) => (typeof e === "number" ? e : e.status);
  const custom = spec.errors ?? [];
  const errors = [...auto.filter((a) => !custom.some((c) => statusOf(c) === statusOf(a))), ...custom];
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    auth: spec.auth,
    limiter: spec.limiter,
    idempotent: spec.idempotent ?? false,
    refuseBrowsers: spec.refuseBrowsers ?? false,
    queryKeyAuth: spec.queryKeyAuth ?? false,
    query: input.query,
    params: input.params,
    body: input.body,
    bodyMediaType: spec.bodyMediaType,
    response: { status: 200, ...spec.response },
    errors,
    async run(raw, call) {
      // Like FastAPI, one 422 lists the problems of every location at once.
      const issues: ValidationIssue[] = [];
      const parse = <S extends z.ZodType>(schema: S | undefined, value: unknown, where: InputLocation) => {
        if (!schema) return undefined;
        try {
          return parseOrThrow(schema, value, where);
        } catch (err) {
          if (!(err instanceof SchemaError)) throw err;
          issues.push(...(err.detail as ValidationIssue[]));
          return undefined;
        }
      };
      // NUL means nothing in an id or a filter and Postgres text cannot hold it.
      for (const [where, values] of [
        ["path", raw.params],
        ["query", raw.query],
      ] as const) {
        if (typeof values !== "object" || values === null) continue;
        for (const [name, value] of Object.entries(values)) {
          if (typeof value === "string" && value.includes("\0")) {
            issues.push({ type: "value_error", loc: [where, name], msg: "Value error, NUL (%00) is not allowed" });
          }
        }
      }
      const params = parse(input.params, raw.params, "path") as InputOf<P>;
      const query = parse(input.query, raw.query, "query") as InputOf<Q>;
      const body = parse(input.body, raw.body, "body") as InputOf<B>;
      if (issues.length > 0) throw new SchemaError(issues);
      return spec.handle({ query, params, body }, call);
    },
  };
}

/** "/v1/sessions/{session_id}" → "/v1/sessions/:session_id" (Express syntax). */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");
}

/**
 * Checks the raw path before Express decodes its parameters, so a bad id is a 400 that names
 * the path parameter instead of a decode failure: every segment must be valid percent-encoded
 * UTF-8, must not decode to `.` or `..` (dot segments are not resolved) and must not hold NUL
 * or other control characters. The parameter is named from the first route template with the
 * same literal segments; other paths name the segment's position.
 */
export function pathGuard(routes: Route[]): import("express").RequestHandler {
  const templates = routes.map((r) => r.path.split("/"));
  const paramName = (segments: string[], index: number): string => {
    for (const t of templates) {
      if (t.length !== segments.length) continue;
      const fits = t.every((part, i) => i === index || part.startsWith("{") || part === segments[i]);
      const m = /^\{([A-Za-z0-9_]+)\}$/.exec(t[index] ?? "");
      if (fits && m) return `Path parameter '${m[1]}'`;
    }
    return `Path segment ${index} ('${printableSegment(segments[index])}')`;
  };
  return (req, _res, next) => {
    const segments = req.path.split("/");
    for (let i = 1; i < segments.length; i++) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segments[i]);
      } catch {
        return next(
          new InputError(
            `${paramName(segments, i)} is not valid percent-encoding: each %XX must be a hex byte and the bytes valid UTF-8`,
          ),
        );
      }
      if (decoded === "." || decoded === "..") {
        return next(
          new InputError(
            `${paramName(segments, i)} must not be '${decoded}': dot segments are not resolved; send the id itself`,
          ),
        );
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
      if (/[\u0000-\u001f\u007f]/.test(decoded)) {
        return next(new InputError(`${paramName(segments, i)} must not contain NUL (%00) or other control characters`));
      }
    }
    next();
  };
}

function printableSegment(segment: string): string {
  const clean = segment.replace(/[^\x20-\x7e]/g, "?");
  return clean.length > 60 ? `${clean.slice(0, 60)}…` : clean;
}
