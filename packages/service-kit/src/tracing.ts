// OpenTelemetry traces across our own boundaries, instrumented explicitly (no auto-instrumentation):
// HTTP at the gateway, every gRPC call on both sides, NATS headers, and the rows that carry a
// request into later work (the documents outbox, the agent's jobs) as a W3C `traceparent`.
//
// Off unless initTracing got an OTLP endpoint. Off, every helper here checks one boolean and
// calls through: the SDK is not even loaded, no tracer, no span object, no context manager (so
// no async hooks), no header, so the cost stays out of the chat path. On, a BasicTracerProvider batches spans to the OTLP/HTTP exporter
// (JSON encoding), contexts follow async work through AsyncLocalStorage, and the W3C propagator
// reads and writes `traceparent`.
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import type { Metadata } from "@grpc/grpc-js";
import {
  type Attributes,
  type Context,
  type ContextManager,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

export { SpanKind };

/** Tracing settings from the OTEL_* variables (readTracingEnv); absent = tracing off. */
export interface TracingConfig {
  /** Full URL spans are POSTed to (…/v1/traces). */
  tracesUrl: string;
  /** Resource service.name; default `redline-<service>`. */
  serviceName?: string;
}

type Env = Record<string, string | undefined>;

/**
 * Standard OTel env semantics: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) with `/v1/traces` appended; OTEL_SERVICE_NAME
 * overrides the service name. Undefined (tracing off) when neither endpoint is set.
 */
export function readTracingEnv(env: Env): TracingConfig | undefined {
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = signal || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!tracesUrl) return undefined;
  return { tracesUrl, serviceName: env.OTEL_SERVICE_NAME?.trim() || undefined };
}

/** The process's tracing: flush exports what is batched; shutdown flushes and stops exporting. */
export interface Tracing {
  enabled: boolean;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const sdkRequire = createRequire(import.meta.url);

const OFF: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };
let current: Tracing = OFF;
/** The one flag every helper checks first, so tracing off costs a branch. */
let enabled = false;
/** The provider's tracer, taken once at init: no global/proxy lookup per span. */
let tracer: Tracer | undefined;

/** Follows the active context through awaits and callbacks (what context-async-hooks does, in a few lines). */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const storage = this.storage;
    return function (this: unknown, ...args: unknown[]) {
      return storage.run(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/**
 * Sets up tracing for this process, once (later calls return the first answer): with `cfg`, a
 * BasicTracerProvider batching spans to OTLP/HTTP at `cfg.tracesUrl` under service.name
 * `cfg.serviceName ?? redline-<service>`, the W3C propagator and an AsyncLocalStorage context
 * manager; without, nothing is registered and every helper here is a pass-through.
 */
export function initTracing(service: string, cfg: TracingConfig | undefined): Tracing {
  if (current.enabled || !cfg) return current;
  // The SDK is loaded only here, so a process with tracing off never loads (or JITs) it; these
  // packages ship CommonJS, and a synchronous require keeps initTracing synchronous.
  const { W3CTraceContextPropagator } = sdkRequire("@opentelemetry/core") as typeof import("@opentelemetry/core");
  const { OTLPTraceExporter } = sdkRequire(
    "@opentelemetry/exporter-trace-otlp-http",
  ) as typeof import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes } = sdkRequire(
    "@opentelemetry/resources",
  ) as typeof import("@opentelemetry/resources");
  const { BasicTracerProvider, BatchSpanProcessor } = sdkRequire(
    "@opentelemetry/sdk-trace-base",
  ) as typeof import("@opentelemetry/sdk-trace-base");
  const { ATTR_SERVICE_NAME } = sdkRequire(
    "@opentelemetry/semantic-conventions",
  ) as typeof import("@opentelemetry/semantic-conventions");
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: cfg.serviceName ?? `redline-${service}` }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.tracesUrl }))],
  });
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer("redline");
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  enabled = true;
  current = {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return current;
}

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The W3C `traceparent` of the active span, to store with work done later; undefined when off or none. */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a stored or received `traceparent` (and `tracestate`) continue; ROOT when absent or invalid. */
function contextOf(carrier: Record<string, string | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** How a span starts: kind, attributes, and a remote parent (a traceparent) instead of the active one. */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Continue this W3C traceparent (from a header, a row) instead of the active context. */
  traceparent?: string | null;
  links?: Link[];
}

/**
 * Runs `fn` inside a new span (active for everything `fn` awaits) and ends it when `fn`
 * settles; a throw is recorded on the span and rethrown. When tracing is off, just `fn()`.
 */
export async function withSpan<T>(name: string, opts: SpanOptions, fn: (span?: Span) => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const parent = opts.traceparent ? contextOf({ traceparent: opts.traceparent }) : context.active();
  const span = (tracer as Tracer).startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    recordError(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks `span` failed with `err`. */
export function recordError(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/**
 * Starts a server span continuing the remote parent in `carrier` (HTTP headers, gRPC metadata
 * as a record) and runs `fn` with it active; the caller ends the span (an HTTP response ends
 * after the handler returned). When off, runs `fn` with no span.
 */
export function startServerSpan<T>(
  name: string,
  carrier: Record<string, string | string[] | undefined>,
  attributes: Attributes,
  fn: (span?: Span) => T,
): T {
  if (!enabled) return fn();
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  const span = (tracer as Tracer).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return context.with(trace.setSpan(parent, span), () => fn(span));
}

/** `traceparent` (and `tracestate`) of the active context as header pairs; empty when off or none. */
export function traceHeaders(): Record<string, string> {
  if (!enabled) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** What traceLogFields answers when no span is active: one shared, frozen empty object. */
export const NO_TRACE_FIELDS: Readonly<{ trace_id?: string; span_id?: string }> = Object.freeze({});

/** trace_id and span_id of the active span for log lines (a new object); NO_TRACE_FIELDS when off or none. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  if (!enabled) return NO_TRACE_FIELDS;
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE_FIELDS;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

const rpcAttributesByPath = new Map<string, Attributes>();

/**
 * `rpc.system`, `rpc.service` and `rpc.method` of a gRPC method path (`/pkg.Service/Method`),
 * built once per path (a process has a fixed set of them); the span copies what it is given.
 */
function rpcAttributes(path: string): Attributes {
  let attributes = rpcAttributesByPath.get(path);
  if (!attributes) {
    const [service = "", method = ""] = path.slice(1).split("/");
    attributes = Object.freeze({ "rpc.system": "grpc", "rpc.service": service, "rpc.method": method });
    rpcAttributesByPath.set(path, attributes);
  }
  return attributes;
}

/** The span name of a gRPC method path: `pkg.Service/Method` (OTel RPC conventions). */
const rpcSpanName = (path: string) => path.slice(1);

/** Error code on a gRPC span: a ServiceError's or a RedlineError's status code. */
function grpcCodeOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; grpcCode?: unknown };
  if (typeof e?.grpcCode === "number") return e.grpcCode;
  return typeof e?.code === "number" ? e.code : undefined;
}

const HEALTH_PREFIX = "/grpc.health.v1.";

/** Runs one handled gRPC call inside a server span that continues the caller's `traceparent` metadata. */
export async function rpcServerSpan<T>(path: string, metadata: Metadata, fn: () => Promise<T>): Promise<T> {
  // Probes hit grpc.health every few seconds: a root trace each would bury the real ones.
  if (!enabled || path.startsWith(HEALTH_PREFIX)) return fn();
  const carrier: Record<string, string> = {};
  for (const key of ["traceparent", "tracestate"]) {
    const v = metadata.get(key)[0];
    if (typeof v === "string") carrier[key] = v;
  }
  return startServerSpan(rpcSpanName(path), carrier, rpcAttributes(path), async (span) => {
    try {
      const out = await fn();
      span?.setAttribute("rpc.grpc.status_code", 0);
      return out;
    } catch (err) {
      span?.setAttribute("rpc.grpc.status_code", grpcCodeOf(err) ?? 2);
      if (span) recordError(span, err);
      throw err;
    } finally {
      span?.end();
    }
  });
}

/**
 * Runs one gRPC client call (with its retries) inside a client span whose `traceparent` goes into
 * `md`. The span is not made active: the call's only child is the server span, which continues
 * the traceparent in `md`, so no context switch (an AsyncLocalStorage run) is paid per call.
 */
export async function rpcClientSpan<T>(path: string, md: Metadata, fn: () => Promise<T>): Promise<T> {
  // Health probes of another service are not traced on either side (see rpcServerSpan).
  if (!enabled || path.startsWith(HEALTH_PREFIX)) return fn();
  const parent = context.active();
  const span = (tracer as Tracer).startSpan(
    rpcSpanName(path),
    { kind: SpanKind.CLIENT, attributes: rpcAttributes(path) },
    parent,
  );
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), carrier);
  for (const key in carrier) md.set(key, carrier[key]);
  try {
    const out = await fn();
    span.setAttribute("rpc.grpc.status_code", 0);
    return out;
  } catch (err) {
    span.setAttribute("rpc.grpc.status_code", grpcCodeOf(err) ?? 2);
    recordError(span, err);
    throw err;
  } finally {
    span.end();
  }
}
