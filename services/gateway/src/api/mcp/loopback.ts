// How the MCP tools act: each one is a call of Redline's own HTTP API, sent with the caller's own
// Authorization header to the very listener the MCP request came in on (its socket's local address),
// so authentication, owner scope, validation bounds, rate limits, quotas and the error shapes are
// the /v1 routes' own code, not a second copy. The typed client of packages/client is not used
// here: its types are generated from this gateway's OpenAPI document, so the gateway depending on
// it would close a loop (gateway → client → the gateway's codegen); the routes' own response
// schemas type the answers instead.
import type { IncomingMessage } from "node:http";
import type { z } from "zod";

/** A non-2xx answer of a loopback call: the status and the spec's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeError(status, body));
  }
}

/** Query values of a loopback call; undefined ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** The caller's view of the HTTP API. */
export interface RedlineHttp {
  /**
   * Calls `method path` (path segments already encoded, see `seg`) with a JSON body or query; the
   * answer typed by `schema` (the route's response schema; not re-validated). Throws ApiError on
   * a non-2xx answer.
   */
  call<S extends z.ZodType>(
    schema: S,
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    opts?: { query?: Query; body?: unknown },
  ): Promise<z.output<S>>;
}

/** One path segment, percent-encoded. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/**
 * The base URL of the listener `req` arrived on (its socket's local address and port): always
 * this same gateway process, whatever address it binds and however many replicas run.
 */
export function ownListener(req: IncomingMessage): string {
  const address = req.socket.localAddress ?? "127.0.0.1";
  const host = address.includes(":") ? `[${address}]` : address;
  return `http://${host}:${req.socket.localPort}`;
}

/**
 * A RedlineHttp sending `authorization` (the MCP request's own header) and `requestId` (so the
 * loopback requests log under the MCP request's id) to `baseUrl`; `signal` aborts calls in
 * flight when the MCP client goes away.
 */
export function loopbackHttp(opts: {
  baseUrl: string;
  authorization: string;
  requestId: string;
  signal?: AbortSignal;
}): RedlineHttp {
  return {
    async call(_schema, method, path, { query, body } = {}) {
      const url = new URL(path, opts.baseUrl);
      for (const [name, value] of Object.entries(query ?? {})) {
        if (value !== undefined) url.searchParams.set(name, String(value));
      }
      const res = await fetch(url, {
        method,
        headers: {
          Authorization: opts.authorization,
          "X-Request-Id": opts.requestId,
          Accept: "application/json",
          "User-Agent": "redline-mcp",
          ...(body !== undefined && { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: opts.signal,
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === "" ? null : JSON.parse(text);
      } catch {
        // Not JSON (a proxy's page): kept as text for the error.
      }
      if (!res.ok) throw new ApiError(res.status, parsed);
      return parsed as never;
    },
  };
}

/**
 * An error answer in words for a tool result: the status, then the spec body's detail. A 422's
 * `{loc, msg}` items become `field: msg` with the location prefix (body, query, path) dropped,
 * so the caller reads the tool's own field names.
 */
export function describeError(status: number, body: unknown): string {
  const detail = typeof body === "object" && body !== null && "detail" in body ? body.detail : body;
  const code = typeof body === "object" && body !== null && "code" in body ? ` (${String(body.code)})` : "";
  if (Array.isArray(detail)) {
    const items = detail.map((item: { loc?: unknown[]; msg?: string }) => {
      const loc = (item.loc ?? []).filter((part, i) => !(i === 0 && ["body", "query", "path"].includes(String(part))));
      return `${loc.length > 0 ? `${loc.join(".")}: ` : ""}${item.msg ?? "invalid"}`;
    });
    return `HTTP ${status}: invalid input: ${items.join("; ")}`;
  }
  const text = typeof detail === "string" ? detail : JSON.stringify(detail);
  return `HTTP ${status}${code}: ${text}`;
}
