// Bearer authentication (interface-spec, Authentication): `Authorization: Bearer <API_KEY>` is
// resolved by billing into a principal. Positive answers are cached for authCacheTtlMs, so a
// revocation takes effect within that time; failures are never cached. Keys are never logged.
// A key the cache does not vouch for (and a missing or malformed one) first passes the source's
// failure gate (source-limit.ts), so a flood of random keys is refused before billing is asked.
import { createHash } from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { type Principal, RedlineError, type TraceContext } from "@redline/service-kit";
import type { RequestHandler, Response } from "express";
import type { GatewayContext } from "./context.js";
import { requestState } from "./request-context.js";
import { clientSource } from "./source-address.js";
import type { AuthFailureGate } from "./source-limit.js";

/** `<scheme> <key>`: the scheme is case-insensitive (RFC 7235; unshown-parts.md), one space, one token. */
const BEARER = /^bearer (\S+)$/i;
/** Keys are `sk_` + 32 hex; anything far longer cannot be one and is not sent to billing. */
const MAX_KEY_CHARS = 512;
const RESOLVE_TIMEOUT_MS = 5000;
const MAX_CACHE_ENTRIES = 10_000;

/** 401 `{detail}` with a `WWW-Authenticate: Bearer` challenge. */
export function unauthenticated(detail: string): RedlineError {
  return new RedlineError(401, GrpcStatus.UNAUTHENTICATED, detail, { headers: { "WWW-Authenticate": "Bearer" } });
}

/** A resolved key. */
export interface ResolvedKey {
  principal: Principal;
  keyId: string;
  /** Only GET and HEAD requests pass with this key. */
  readOnly: boolean;
}

/** Methods a read-only key may use: the ones that change nothing. */
const READ_METHODS = new Set(["GET", "HEAD"]);

/** 403 `{detail}` for a write with a read-only key. */
function readOnlyRefusal(): RedlineError {
  return new RedlineError(
    403,
    GrpcStatus.PERMISSION_DENIED,
    "This API key is read-only: it can only make GET and HEAD requests. Use a key without read_only to change anything.",
  );
}

/** Resolves API keys through billing with a short positive cache. */
export interface KeyResolver {
  /**
   * The key's principal; throws 401 for unknown or revoked keys, 503 when billing is down. A
   * lookup runs under the request that needed it (`requestId`, `trace`); others wait for it.
   */
  resolve(apiKey: string, requestId: string, trace?: TraceContext): Promise<ResolvedKey>;
  /** Whether the positive cache vouches for the key right now (resolve will not ask billing). */
  known(apiKey: string): boolean;
}

/** A KeyResolver over `ctx.accounts.resolveApiKey`, caching successes for `ttlMs`. */
export function createKeyResolver(ctx: GatewayContext, ttlMs: number): KeyResolver {
  const cache = new Map<string, { value: ResolvedKey; expiresAt: number }>();
  const inflight = new Map<string, Promise<ResolvedKey>>();

  const remember = (id: string, value: ResolvedKey) => {
    if (ttlMs <= 0) return;
    if (cache.size >= MAX_CACHE_ENTRIES) {
      const now = Date.now();
      for (const [k, v] of cache) if (v.expiresAt <= now) cache.delete(k);
      if (cache.size >= MAX_CACHE_ENTRIES) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
    }
    cache.set(id, { value, expiresAt: Date.now() + ttlMs });
  };

  const lookup = async (apiKey: string, requestId: string, trace?: TraceContext): Promise<ResolvedKey> => {
    let res: Awaited<ReturnType<GatewayContext["accounts"]["resolveApiKey"]>>;
    try {
      res = await ctx.accounts.resolveApiKey({ apiKey }, { requestId, timeoutMs: RESOLVE_TIMEOUT_MS, trace });
    } catch (err) {
      // Billing's own refusals (unknown, revoked, malformed key) all read as 401 to the caller.
      if (err instanceof RedlineError && err.httpStatus >= 400 && err.httpStatus < 500 && err.httpStatus !== 429) {
        throw unauthenticated(typeof err.detail === "string" ? err.detail : "Invalid or revoked API key");
      }
      throw err;
    }
    const p = res.principal;
    if (!p?.ownerId) throw unauthenticated("Invalid or revoked API key");
    return {
      principal: {
        userId: p.userId,
        organizationId: p.organizationId,
        ownerId: p.ownerId,
        plan: p.plan,
        ...(p.userName ? { userName: p.userName } : {}),
        ...(p.keyId ? { keyId: p.keyId } : {}),
      },
      keyId: p.keyId,
      readOnly: p.readOnly,
    };
  };

  const cacheId = (apiKey: string) => createHash("sha256").update(apiKey).digest("hex");
  return {
    known(apiKey) {
      const hit = cache.get(cacheId(apiKey));
      return hit !== undefined && hit.expiresAt > Date.now();
    },
    async resolve(apiKey, requestId, trace) {
      const id = cacheId(apiKey);
      const hit = cache.get(id);
      if (hit && hit.expiresAt > Date.now()) return hit.value;
      if (hit) cache.delete(id);
      let pending = inflight.get(id);
      if (!pending) {
        pending = lookup(apiKey, requestId, trace).then((value) => {
          remember(id, value);
          return value;
        });
        const settled = pending.finally(() => inflight.delete(id));
        settled.catch(() => {});
        inflight.set(id, pending);
      }
      return pending;
    },
  };
}

/** Per response: resolves the request's key again (through the resolver and its cache). */
const rechecks = new WeakMap<Response, () => Promise<ResolvedKey>>();

/**
 * Resolves again the key that authenticated `res`'s request, for long-lived responses (the
 * progress stream) that must stop once the key is revoked. Answers come from the resolver's
 * cache, so a revocation shows within authCacheTtlMs. Rejects with a 401 RedlineError when the
 * key no longer resolves (503 when billing is down); null when the request had no key.
 */
export function recheckKey(res: Response): Promise<ResolvedKey> | null {
  return rechecks.get(res)?.() ?? null;
}

/** The 401 of a key billing refused (unknown, revoked, malformed): a failed resolution. */
function isRefusedKey(err: unknown): boolean {
  return err instanceof RedlineError && err.httpStatus === 401;
}

/**
 * Middleware for every /v1 route: requires `Authorization: Bearer <key>` (the scheme in any case:
 * `Bearer`, `bearer`, `BEARER`; a single space); missing, malformed, unknown or revoked → 401 `{detail}`.
 * On success the principal is on the request state for the handler and the gRPC metadata. A
 * read-only key gets 403 `{detail}` on any method but GET and HEAD, before any body is read.
 * With `queryKey` (the progress stream), a request without the header may carry the key as the
 * `api_key` or `token` query parameter. Unless the resolver's cache vouches for the key, the
 * request first takes a token of its source from `gate` (429 `auth_rate_limited` when the source
 * is past its failures, before billing is asked); only a 401 keeps the token.
 */
export function authenticate(
  resolver: KeyResolver,
  gate: AuthFailureGate,
  opts: { queryKey?: boolean } = {},
): RequestHandler {
  return async (req, res, next) => {
    const state = requestState(res);
    const presented = presentedKey(req.get("authorization"), opts.queryKey ? req.query : undefined);
    const attempt = typeof presented === "string" && resolver.known(presented) ? null : gate.attempt(clientSource(req));
    // A missing or malformed key is a failed resolution too: its token is kept.
    if (typeof presented !== "string") throw presented;
    let resolved: ResolvedKey;
    try {
      resolved = await resolver.resolve(presented, state.requestId, state.trace);
    } catch (err) {
      if (!isRefusedKey(err)) attempt?.succeeded();
      throw err;
    }
    attempt?.succeeded();
    if (resolved.readOnly && !READ_METHODS.has(req.method)) throw readOnlyRefusal();
    state.principal = resolved.principal;
    state.keyId = resolved.keyId;
    rechecks.set(res, () => resolver.resolve(presented, state.requestId, state.trace));
    next();
  };
}

/**
 * The key a request presents: the bearer token of `header`, else (with `query`, the progress
 * stream) a non-empty `api_key` or `token` parameter of at most MAX_KEY_CHARS; else the 401 to answer.
 */
function presentedKey(header: string | undefined, query?: Record<string, unknown>): string | RedlineError {
  if (!header && query) {
    // Browser EventSource cannot send headers: the stream takes the key as ?api_key= or ?token=.
    const raw = query.api_key ?? query.token;
    const key = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (typeof key === "string" && key.length > 0 && key.length <= MAX_KEY_CHARS) return key;
  }
  if (!header) return unauthenticated("Not authenticated: send Authorization: Bearer <API_KEY>");
  const match = BEARER.exec(header);
  if (!match || match[1].length > MAX_KEY_CHARS) {
    return unauthenticated("Invalid authorization header: expected 'Bearer <API_KEY>'");
  }
  return match[1];
}
