// OpenTelemetry traces across our own boundaries, instrumented explicitly (no auto-instrumentation):
// HTTP at the gateway, every gRPC call on the server side (and the client side of a failed call,
// or of every call with TRACE_RPC_CLIENT_SPANS=all), NATS headers, and the rows that carry a
// request into later work (the documents outbox, the agent's jobs) as a W3C `traceparent`.
//
// Off unless initTracing got an OTLP endpoint. Off, every helper here checks one boolean and
// calls through: the SDK is not even loaded, no tracer, no span object, no header, so the cost
// stays out of the chat path. On, a BasicTracerProvider batches spans to the OTLP/HTTP exporter
// (JSON encoding) and the W3C propagator reads and writes `traceparent`.
//
// The span to continue is passed explicitly (a TraceContext in CallContext.trace and CallOpts.trace,
// and to withSpan's callback), never through a context manager: on Node 20 AsyncLocalStorage turns
// on promise hooks for the whole process, and bench (o) measured that alone at about 1.3 ms of a
// 30 ms chat turn (4 %), more than every span of the turn together.
import { createRequire } from "node:module";
import type { Metadata } from "@grpc/grpc-js";
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";

export { SpanKind };

/**
 * The span a piece of work continues, handed from a server span to the calls, rows and messages
 * it causes (CallContext.trace → CallOpts.trace). Opaque to callers; undefined when tracing is off.
 */
export type TraceContext = Context;

/**
 * Which gRPC calls get a client span of their own. "errors" (the default): only a call that
 * failed (its span runs from the call's start to the failure, retries included), while a call
 * that succeeded is seen as its server span, a child of the caller's span. "all": every call,
 * the OTel RPC conventions' client/server pair, at about 30 µs more per call.
 */
export type RpcClientSpans = "all" | "errors";

/** The OTel SDK's sampler names (OTEL_TRACES_SAMPLER), each the SDK's own sampler class. */
export const SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Which turns are recorded: OTEL_TRACES_SAMPLER and, for the ratio samplers, OTEL_TRACES_SAMPLER_ARG. */
export interface SamplerConfig {
  name: SamplerName;
  /** Share of new traces recorded, 0 to 1 (the ratio samplers only; 1 for the others). */
  ratio: number;
}

/** Tracing settings from the OTEL_* variables (readTracingEnv); absent = tracing off. */
export interface TracingConfig {
  /** Full URL spans are POSTed to (…/v1/traces). */
  tracesUrl: string;
  /** Resource service.name; default `redline-<service>`. */
  serviceName?: string;
  /** TRACE_RPC_CLIENT_SPANS; default "errors". */
  rpcClientSpans?: RpcClientSpans;
  /** Default parentbased_always_on, ratio 1 (the OTel default). */
  sampler?: SamplerConfig;
}

type Env = Record<string, string | undefined>;

/**
 * Standard OTel env semantics: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) with `/v1/traces` appended; OTEL_SERVICE_NAME
 * overrides the service name; OTEL_TRACES_SAMPLER (one of SAMPLERS, default
 * parentbased_always_on) with OTEL_TRACES_SAMPLER_ARG (the ratio samplers' share, 0 to 1,
 * default 1); TRACE_RPC_CLIENT_SPANS is `errors` (default) or `all`. Undefined (tracing off)
 * when neither endpoint is set. Throws naming the variable on any other TRACE_RPC_CLIENT_SPANS,
 * and, with tracing on, on a sampler or ratio outside those: the SDK would fall back to
 * recording every turn without a word.
 */
export function readTracingEnv(env: Env): TracingConfig | undefined {
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = signal || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  const clientSpans = (env.TRACE_RPC_CLIENT_SPANS?.trim() || "errors").toLowerCase();
  if (clientSpans !== "errors" && clientSpans !== "all")
    throw new Error(`TRACE_RPC_CLIENT_SPANS must be errors or all; got ${env.TRACE_RPC_CLIENT_SPANS}`);
  if (!tracesUrl) return undefined;
  return {
    tracesUrl,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || undefined,
    rpcClientSpans: clientSpans,
    sampler: readSamplerEnv(env),
  };
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (see readTracingEnv). */
function readSamplerEnv(env: Env): SamplerConfig {
  const name = (env.OTEL_TRACES_SAMPLER?.trim() || "parentbased_always_on").toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(name))
    throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}; got ${env.OTEL_TRACES_SAMPLER}`);
  if (!name.endsWith("traceidratio")) return { name: name as SamplerName, ratio: 1 };
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : 1;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; got ${env.OTEL_TRACES_SAMPLER_ARG}`);
  return { name: name as SamplerName, ratio };
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
/** The W3C propagator, held here as the tracer is: the `propagation` global checks the API version on every call. */
let propagator: TextMapPropagator | undefined;
/** TracingConfig.rpcClientSpans === "all". */
let everyClientSpan = false;
/**
 * Whether this process's sampler leaves a span unrecorded whenever its parent was sampled out:
 * the parentbased_* samplers and always_off (always_on and traceidratio decide span by span).
 * Then no span is started under such a parent at all (see unsampledSpanOf).
 */
let parentDecides = true;

/**
 * Sets up tracing for this process, once (later calls return the first answer): with `cfg`, a
 * BasicTracerProvider batching spans to OTLP/HTTP at `cfg.tracesUrl` under service.name
 * `cfg.serviceName ?? redline-<service>` and the W3C propagator (no context manager: contexts are
 * passed explicitly); without, nothing is registered and every helper here is a pass-through.
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
  const sdk = sdkRequire("@opentelemetry/sdk-trace-base") as typeof import("@opentelemetry/sdk-trace-base");
  const { ATTR_SERVICE_NAME } = sdkRequire(
    "@opentelemetry/semantic-conventions",
  ) as typeof import("@opentelemetry/semantic-conventions");
  const sampling = cfg.sampler ?? { name: "parentbased_always_on", ratio: 1 };
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: cfg.serviceName ?? `redline-${service}` }),
    // Built here from the config, so the SDK never reads OTEL_TRACES_SAMPLER on its own.
    sampler: samplerOf(sdk, sampling),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.tracesUrl }))],
  });
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer("redline");
  propagator = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(propagator);
  everyClientSpan = cfg.rpcClientSpans === "all";
  parentDecides = sampling.name.startsWith("parentbased_") || sampling.name === "always_off";
  enabled = true;
  current = {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return current;
}

/** The SDK's sampler for `cfg`: a ParentBasedSampler around the root's choice for parentbased_*. */
function samplerOf(sdk: typeof import("@opentelemetry/sdk-trace-base"), cfg: SamplerConfig) {
  const root = cfg.name.endsWith("always_on")
    ? new sdk.AlwaysOnSampler()
    : cfg.name.endsWith("always_off")
      ? new sdk.AlwaysOffSampler()
      : new sdk.TraceIdRatioBasedSampler(cfg.ratio);
  return cfg.name.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

/**
 * Pauses (false) or resumes (true) tracing in a process where initTracing turned it on; paused,
 * every helper passes through as when tracing is off, and the provider stays, idle. For an A/B
 * measurement inside one process (pnpm bench o): two processes differ by more than the cost
 * measured. A span started before a pause still ends.
 */
export function setTracingRecording(on: boolean): void {
  enabled = on && current.enabled;
}

/**
 * The propagation headers of each context, written once: a chat turn's span makes about eight
 * calls with the same context, and contexts are immutable. Never mutate what carrierOf returns.
 */
const carriers = new WeakMap<Context, Readonly<Record<string, string>>>();

/** `traceparent` (and `tracestate`) of `context`'s span, as the W3C propagator writes them; {} for none. */
function carrierOf(context: Context): Readonly<Record<string, string>> {
  let carrier = carriers.get(context);
  if (!carrier) {
    const written: Record<string, string> = {};
    (propagator as TextMapPropagator).inject(context, written, defaultTextMapSetter);
    carrier = written;
    carriers.set(context, carrier);
  }
  return carrier;
}

/** The W3C `traceparent` of `trace`'s span, to store with work done later; undefined when off or none. */
export function traceparentOf(trace: TraceContext | undefined): string | undefined {
  if (!enabled || !trace) return undefined;
  return carrierOf(trace).traceparent;
}

/**
 * `parent`'s span when it was sampled out and the sampler follows the parent: the SDK would start
 * a span that records nothing, and what it hands on would still say "not sampled", so the work
 * under it continues `parent` itself. A turn sampled out then costs its calls the header alone.
 */
function unsampledSpanOf(parent: Context): Span | undefined {
  if (!parentDecides) return undefined;
  const span = trace.getSpan(parent);
  if (!span || span.isRecording()) return undefined;
  const context = span.spanContext();
  return (context.traceFlags & TraceFlags.SAMPLED) === 0 && trace.isSpanContextValid(context) ? span : undefined;
}

/** The context a stored or received `traceparent` (and `tracestate`) continue; ROOT when absent or invalid. */
function contextOf(carrier: Record<string, string | string[] | undefined>): Context {
  return (propagator as TextMapPropagator).extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

/** Most remote contexts parsed lately, by traceparent, before the cache starts over. */
const REMOTE_CONTEXTS_KEPT = 256;
/**
 * Remote contexts by the `traceparent` they were parsed from: the calls a span makes all send its
 * traceparent (a turn's Chat span, six calls), and each server would parse the same header again.
 * Contexts are immutable, so they are shared. Only a bare traceparent is kept; with a tracestate
 * (rare here) the pair is parsed each time.
 */
const remoteContexts = new Map<string, Context>();

/** contextOf for a `traceparent` (and `tracestate`) as received: ROOT when there is none. */
function remoteContextOf(traceparent: unknown, tracestate: unknown): Context {
  if (typeof traceparent !== "string") return ROOT_CONTEXT;
  if (typeof tracestate === "string") return contextOf({ traceparent, tracestate });
  let context = remoteContexts.get(traceparent);
  if (!context) {
    if (remoteContexts.size >= REMOTE_CONTEXTS_KEPT) remoteContexts.clear();
    context = contextOf({ traceparent });
    remoteContexts.set(traceparent, context);
  }
  return context;
}

/** How a span starts: kind, attributes, and its parent (a context, or a stored traceparent). */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The span this one is a child of; none: a new trace. */
  parent?: TraceContext;
  /** Continue this W3C traceparent (from a header, a row) instead of `parent`. */
  traceparent?: string | null;
  links?: Link[];
}

/**
 * Runs `fn` inside a new span and ends it when `fn` settles; `fn` gets the span and its context,
 * to pass to the calls it makes (CallOpts.trace). A throw is recorded on the span and rethrown.
 * When tracing is off, just `fn()`; under a sampled-out parent, `fn` gets the parent's
 * non-recording span and context (see unsampledSpanOf).
 */
export async function withSpan<T>(
  name: string,
  opts: SpanOptions,
  fn: (span?: Span, trace?: TraceContext) => Promise<T>,
): Promise<T> {
  if (!enabled) return fn();
  const parent = opts.traceparent ? remoteContextOf(opts.traceparent, undefined) : (opts.parent ?? ROOT_CONTEXT);
  const unsampled = unsampledSpanOf(parent);
  if (unsampled) return fn(unsampled, parent);
  const span = (tracer as Tracer).startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links },
    parent,
  );
  try {
    return await fn(span, trace.setSpan(parent, span));
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
 * as a record); the caller ends the span (an HTTP response ends after the handler returned) and
 * passes `trace` to the work it causes. Undefined when off; under a sampled-out remote parent,
 * the parent's non-recording span and context (ending it does nothing).
 */
export function startServerSpan(
  name: string,
  carrier: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; trace: TraceContext } | undefined {
  return enabled ? openServerSpan(name, contextOf(carrier), attributes) : undefined;
}

/** startServerSpan's work once the remote `parent` is parsed, for callers that checked `enabled` already. */
function openServerSpan(name: string, parent: Context, attributes: Attributes): { span: Span; trace: TraceContext } {
  const unsampled = unsampledSpanOf(parent);
  if (unsampled) return { span: unsampled, trace: parent };
  const span = (tracer as Tracer).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, trace: trace.setSpan(parent, span) };
}

/** `traceparent` (and `tracestate`) of `trace` as header pairs; empty when off or none. */
export function traceHeaders(trace: TraceContext | undefined): Record<string, string> {
  if (!enabled || !trace) return {};
  return { ...carrierOf(trace) };
}

/** What traceLogFields answers when there is no span: one shared, frozen empty object. */
export const NO_TRACE_FIELDS: Readonly<{ trace_id?: string; span_id?: string }> = Object.freeze({});

/** trace_id and span_id of `trace`'s span, to bind on a logger (log.child); NO_TRACE_FIELDS when off or none. */
export function traceLogFields(context: TraceContext | undefined): { trace_id?: string; span_id?: string } {
  if (!enabled || !context) return NO_TRACE_FIELDS;
  const span = trace.getSpan(context);
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

/**
 * Runs one handled gRPC call inside a server span that continues the caller's `traceparent`
 * metadata; `fn` gets the span's context for the calls the handler makes (CallContext.trace).
 */
export async function rpcServerSpan<T>(
  path: string,
  metadata: Metadata,
  fn: (trace?: TraceContext) => Promise<T>,
): Promise<T> {
  // Probes hit grpc.health every few seconds: a root trace each would bury the real ones.
  if (!enabled || path.startsWith(HEALTH_PREFIX)) return fn();
  const parent = remoteContextOf(metadata.get("traceparent")[0], metadata.get("tracestate")[0]);
  const { span, trace: serverTrace } = openServerSpan(rpcSpanName(path), parent, rpcAttributes(path));
  // Sampled out: nothing to set or end.
  if (!span.isRecording()) return fn(serverTrace);
  return endingRpcSpan(span, () => fn(serverTrace));
}

/**
 * Runs one gRPC client call `fn` (with its retries), a child of `parent`, writing the
 * `traceparent` the server span continues into `md`. With client spans for every call
 * (RpcClientSpans "all") the call runs inside a client span, the server span's parent. Else
 * the server span continues `parent` itself, and only a call that failed gets a client span,
 * from the call's start to the failure, recording the error (the server may never have seen it).
 */
export async function rpcClientSpan<T>(
  path: string,
  md: Metadata,
  parent: TraceContext | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  // Health probes of another service are not traced on either side (see rpcServerSpan).
  if (!enabled || path.startsWith(HEALTH_PREFIX)) return fn();
  const from = parent ?? ROOT_CONTEXT;
  if (everyClientSpan) {
    const span = startClientSpan(path, from);
    injectInto(md, trace.setSpan(from, span));
    return endingRpcSpan(span, fn);
  }
  // A chat turn makes about eight calls: a client span each was a third of tracing's cost on
  // the chat path (bench o), and told little more than the server span does on a loopback call.
  injectInto(md, from);
  const startTime = performance.now();
  try {
    return await fn();
  } catch (err) {
    const span = startClientSpan(path, from, startTime);
    span.setAttribute("rpc.grpc.status_code", grpcCodeOf(err) ?? 2);
    recordError(span, err);
    span.end();
    throw err;
  }
}

/** A client span of the call to `path`, under `parent`; `startTime` (performance.now() ms) defaults to now. */
function startClientSpan(path: string, parent: TraceContext, startTime?: number): Span {
  return (tracer as Tracer).startSpan(
    rpcSpanName(path),
    { kind: SpanKind.CLIENT, attributes: rpcAttributes(path), startTime },
    parent,
  );
}

/** Writes `context`'s `traceparent` (and `tracestate`) into gRPC metadata; nothing for ROOT. */
function injectInto(md: Metadata, context: TraceContext): void {
  const carrier = carrierOf(context);
  for (const key in carrier) md.set(key, carrier[key]);
}

/** Runs `fn`, sets the gRPC status code (a throw's, else OK) on the RPC `span`, records a throw, ends it. */
async function endingRpcSpan<T>(span: Span, fn: () => Promise<T>): Promise<T> {
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
