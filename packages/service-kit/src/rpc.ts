// Typed gRPC plumbing over the ts-proto service definitions: handlers are async functions,
// clients return promises, and RedlineErrors cross the wire with their HTTP shape intact.

import { randomUUID } from "node:crypto";
import {
  type CallOptions,
  Client,
  credentials,
  status as GrpcStatus,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import {
  databaseUnavailable,
  type ErrorPayload,
  RedlineError,
  UnauthenticatedError,
  UnavailableError,
} from "./errors.js";
import type { Logger } from "./logger.js";
import { metricsEnabled, rpcServerMetrics } from "./metrics.js";
import { type Principal, principalFromMetadata, principalToMetadata, REQUEST_ID_KEY } from "./principal.js";
import { rpcClientSpan, rpcServerSpan, type TraceContext, traceLogFields } from "./tracing.js";

const ERROR_TRAILER = "redline-error-bin";
/** Documents and uploads can be large; the gateway caps requests long before this. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const CHANNEL_OPTIONS = {
  "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
  "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
};

interface MethodDef {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: variance escape for generated serializers
  requestSerialize: (value: any) => Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: variance escape for generated serializers
  requestDeserialize: (value: Buffer) => any;
  // biome-ignore lint/suspicious/noExplicitAny: variance escape for generated serializers
  responseSerialize: (value: any) => Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: variance escape for generated serializers
  responseDeserialize: (value: Buffer) => any;
}
/** A ts-proto generated service definition: method name → method. */
export type ServiceDef = Record<string, MethodDef>;
type ReqOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResOf<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;

/** What a handler knows about its call besides the request. */
export interface CallContext {
  /** The caller, or null for calls without one (admin CLI, health). */
  principal: Principal | null;
  requestId: string;
  /** Absolute deadline of the call, if the client set one. */
  deadline: Date | null;
  /** Carries the request id, and the trace and span ids when tracing is on. */
  log: Logger;
  /** The call's server span, for what the handler causes (rows, messages); undefined when tracing is off. */
  trace?: TraceContext;
  /** Call options that forward this call's identity (principal, request id, trace) to a downstream service. */
  forward(extra?: Partial<CallOpts>): CallOpts;
}

/** The call's principal; UnauthenticatedError when the caller sent none (services trust only the gateway's). */
export function requirePrincipal(ctx: CallContext): Principal {
  if (!ctx.principal) throw new UnauthenticatedError("no principal on the call");
  return ctx.principal;
}

/** The owner id (user or organization) every read and write of the call is scoped to; UnauthenticatedError without a principal. */
export function ownerOf(ctx: CallContext): string {
  return requirePrincipal(ctx).ownerId;
}

/** Async handlers, one per RPC of a ts-proto service definition. */
export type RpcHandlers<D> = {
  [K in keyof D]: (request: ReqOf<D[K]>, ctx: CallContext) => Promise<ResOf<D[K]>>;
};

/** One service to serve: its generated definition and its handlers. */
export interface ServiceBinding {
  definition: ServiceDef;
  handlers: Record<string, (request: never, ctx: CallContext) => Promise<unknown>>;
}

/** Pairs a definition with its handlers, checked against each other. */
export function bindService<D extends ServiceDef>(definition: D, handlers: RpcHandlers<D>): ServiceBinding {
  return { definition, handlers: handlers as unknown as ServiceBinding["handlers"] };
}

/**
 * One RPC in its own file (`rpc/<verb-noun>.ts`): the service's context, the request and the
 * call, to the response. `Rpc<DocumentsContext, typeof Def, "listVersions">` types it from the
 * generated service definition.
 */
export type Rpc<Ctx, D extends ServiceDef, K extends keyof D> = (
  ctx: Ctx,
  request: ReqOf<D[K]>,
  call: CallContext,
) => Promise<ResOf<D[K]>>;

/** The file of an RPC by convention: `listVersions` → `list-versions`. */
export function rpcFileName(method: string): string {
  return method.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * Binds every method of `definitions` to the function exported under the method's name by
 * `<rpcDir>/<rpcFileName(method)>.js` (tsx and vitest resolve it to the .ts source), handing it
 * `ctx`. Adding an RPC is adding its file. Throws at start, naming the file, when a file is
 * missing, fails to load, or does not export the handler.
 */
export async function bindRpcFiles<Ctx>(ctx: Ctx, rpcDir: URL, definitions: ServiceDef[]): Promise<ServiceBinding[]> {
  const bindOne = async (method: string): Promise<[string, ServiceBinding["handlers"][string]]> => {
    const file = new URL(`${rpcFileName(method)}.js`, rpcDir);
    let mod: Record<string, unknown>;
    try {
      mod = await import(file.href);
    } catch (err) {
      throw new Error(`RPC ${method}: cannot load ${file.pathname}`, { cause: err });
    }
    const fn = mod[method];
    if (typeof fn !== "function") throw new Error(`RPC ${method}: ${file.pathname} exports no function ${method}`);
    return [method, (request, call) => fn(ctx, request, call)];
  };
  return Promise.all(
    definitions.map(async (definition) => ({
      definition,
      handlers: Object.fromEntries(await Promise.all(Object.keys(definition).map(bindOne))),
    })),
  );
}

function errorToGrpc(caught: unknown, log: Logger): Partial<ServiceError> {
  // A lost database is the caller's 503 (retry), not our 500.
  const unavailable = caught instanceof RedlineError ? null : databaseUnavailable(caught);
  if (unavailable) log.warn({ err: caught }, "database unavailable");
  const err = unavailable ?? caught;
  if (err instanceof RedlineError) {
    const trailer = new Metadata();
    trailer.set(ERROR_TRAILER, Buffer.from(JSON.stringify(err.toPayload())));
    return { code: err.grpcCode, details: err.message, metadata: trailer };
  }
  log.error({ err }, "unexpected error");
  return { code: GrpcStatus.INTERNAL, details: "internal error" };
}

/**
 * The handler of one method as grpc-js calls it: the call's context (principal, request id,
 * deadline, logger, span), its server span, its metrics (rpcServerMetrics: the code the caller
 * got, from arrival to answer), and the handler's outcome answered as a status.
 */
function wrapUnary(name: string, fn: ServiceBinding["handlers"][string], log: Logger, active: { calls: number }) {
  const recordCall = rpcServerMetrics(name);
  return async (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    active.calls++;
    // Timed here, in the frame every call has anyway: a wrapper of its own around each handler
    // cost an async frame per call (bench o).
    const started = metricsEnabled() ? performance.now() : -1;
    let code: number = GrpcStatus.OK;
    const requestId = String(call.metadata.get(REQUEST_ID_KEY)[0] ?? randomUUID());
    const principal = principalFromMetadata(call.metadata);
    const deadlineValue = call.getDeadline();
    const deadline =
      deadlineValue instanceof Date
        ? deadlineValue
        : Number.isFinite(deadlineValue)
          ? new Date(deadlineValue as number)
          : null;
    // The call's child logger, with the span's ids when traced, made on first use: most calls log
    // nothing, and pino serializes a child's bindings when it is made.
    let trace: TraceContext | undefined;
    let callLog: Logger | undefined;
    const callLogger = () => (callLog ??= log.child({ rpc: name, requestId, ...traceLogFields(trace) }));
    try {
      const answer = await rpcServerSpan(name, call.metadata, (serverTrace) => {
        trace = serverTrace;
        const ctx: CallContext = {
          principal,
          requestId,
          deadline,
          get log() {
            return callLogger();
          },
          trace,
          forward: (extra = {}) => ({ principal: principal ?? undefined, requestId, trace: serverTrace, ...extra }),
        };
        return fn(call.request as never, ctx);
      });
      callback(null, answer);
    } catch (err) {
      const answered = errorToGrpc(err, callLogger());
      code = answered.code ?? GrpcStatus.INTERNAL;
      callback(answered as ServiceError, null);
    } finally {
      active.calls--;
      if (started >= 0) recordCall((performance.now() - started) / 1000, code);
    }
  };
}

/** Default time in-flight calls get to finish when a server closes (library use and tests). */
export const DEFAULT_DRAIN_MS = 5000;

/** A running gRPC server. */
export interface RunningServer {
  /** The bound port (useful when asked for port 0). */
  port: number;
  address: string;
  /** Calls being handled right now. */
  inFlight(): number;
  /**
   * Stops accepting calls (listener closed, GOAWAY on open connections), waits up to `drainMs`
   * for the calls in flight, then cancels what is left. Resolves "drained" or "forced".
   */
  close(drainMs?: number): Promise<"drained" | "forced">;
}

/** Serves the given services on `address` (host:port; port 0 picks one). */
export async function startGrpcServer(
  address: string,
  services: ServiceBinding[],
  log: Logger,
): Promise<RunningServer> {
  const server = new Server(CHANNEL_OPTIONS);
  const active = { calls: 0 };
  for (const { definition, handlers } of services) {
    const impl: UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(definition)) {
      const handler = handlers[name];
      if (!handler) throw new Error(`no handler for ${method.path}`);
      impl[name] = wrapUnary(method.path, handler, log, active);
    }
    server.addService(definition as unknown as ServiceDefinition, impl);
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const host = address.slice(0, address.lastIndexOf(":"));
  return {
    port,
    address: `${host}:${port}`,
    inFlight: () => active.calls,
    close: (drainMs = DEFAULT_DRAIN_MS) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve("forced");
        }, drainMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve("drained");
        });
      }),
  };
}

/** Per-call options of a client call. */
export interface CallOpts {
  principal?: Principal;
  requestId?: string;
  /** Deadline in milliseconds from now (default 30 s). */
  timeoutMs?: number;
  /** The span this call is part of (CallContext.trace, or a withSpan's); none: the call starts a trace. */
  trace?: TraceContext;
}

/** A promise-returning client for one service. */
export type RpcClient<D> = {
  [K in keyof D]: (request: ReqOf<D[K]>, opts?: CallOpts) => Promise<ResOf<D[K]>>;
} & { close(): void };

/** An error that crossed from another service, rebuilt with its HTTP shape. */
export class RemoteError extends RedlineError {
  constructor(payload: ErrorPayload, grpcCode: GrpcStatus) {
    super(payload.httpStatus, grpcCode, payload.detail, { body: payload.body, headers: payload.headers });
  }
}

/** What a client is told when an internal service is down (the RPC path stays in the logs). */
const DEPENDENCY_DOWN_DETAIL = "Service temporarily unavailable; retry shortly";

/**
 * 503 for an internal service that did not answer (down, restarting): its message names the RPC
 * path for logs, but passed on to another service (the agent's turn calling sessions) it carries
 * only a generic detail and Retry-After, never our internal names.
 */
export class DependencyUnavailableError extends UnavailableError {
  override toPayload(): ErrorPayload {
    return { ...super.toPayload(), detail: DEPENDENCY_DOWN_DETAIL };
  }
}

function errorFromGrpc(err: ServiceError, path: string): Error {
  const raw = err.metadata?.get(ERROR_TRAILER)[0];
  if (raw) {
    const payload = JSON.parse(Buffer.isBuffer(raw) ? raw.toString("utf8") : raw) as ErrorPayload;
    return new RemoteError(payload, err.code);
  }
  if (err.code === GrpcStatus.UNAVAILABLE)
    return new DependencyUnavailableError(`${path} is unavailable`, { retryAfterSeconds: 1 });
  if (err.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new RedlineError(504, GrpcStatus.DEADLINE_EXCEEDED, `${path} did not answer in time`);
  }
  return err;
}

const RETRIES_ON_UNAVAILABLE = 3;

/**
 * Creates a client for `definition` at `address`; retries only a transport-level UNAVAILABLE
 * (no answer from a handler), with backoff.
 */
export function createRpcClient<D extends ServiceDef>(definition: D, address: string): RpcClient<D> {
  const client = new Client(address, credentials.createInsecure(), CHANNEL_OPTIONS);
  const out: Record<string, unknown> = { close: () => client.close() };
  for (const [name, method] of Object.entries(definition)) {
    out[name] = async (request: unknown, opts: CallOpts = {}) => {
      const md = new Metadata();
      if (opts.principal) principalToMetadata(opts.principal, md);
      md.set(REQUEST_ID_KEY, opts.requestId ?? randomUUID());
      return rpcClientSpan(method.path, md, opts.trace, () => callWithRetries(request, md, opts));
    };
    const callWithRetries = async (request: unknown, md: Metadata, opts: CallOpts) => {
      for (let attempt = 0; ; attempt++) {
        const options: CallOptions = { deadline: new Date(Date.now() + (opts.timeoutMs ?? 30_000)) };
        try {
          return await new Promise((resolve, reject) =>
            client.makeUnaryRequest(
              method.path,
              method.requestSerialize,
              method.responseDeserialize,
              request,
              md,
              options,
              (err, res) => (err ? reject(err) : resolve(res)),
            ),
          );
        } catch (err) {
          const e = err as ServiceError;
          // Only a transport failure is retried: an UNAVAILABLE carrying our error trailer comes from
          // a handler that ran (its database was down) and may have had effects; the caller decides.
          const fromHandler = (e.metadata?.get(ERROR_TRAILER).length ?? 0) > 0;
          if (e.code === GrpcStatus.UNAVAILABLE && !fromHandler && attempt < RETRIES_ON_UNAVAILABLE) {
            await new Promise((r) => setTimeout(r, 100 * 3 ** attempt));
            continue;
          }
          throw errorFromGrpc(e, method.path);
        }
      }
    };
  }
  return out as RpcClient<D>;
}
