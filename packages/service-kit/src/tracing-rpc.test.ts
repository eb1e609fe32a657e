// gRPC client spans with tracing on and TRACE_RPC_CLIENT_SPANS unset (errors): through a real
// service-kit server and client, a call that succeeded is only its server span, a child of the
// caller's span; a call that failed, answered by a handler or never answered at all, also gets a
// client span with the error and the gRPC code. This file runs in its own worker, so its provider
// is the only one.
import { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logLines } from "../../../test/support/log-lines.js";
import { NotFoundError } from "./errors.js";
import { createLogger } from "./logger.js";
import { bindService, type CallContext, createRpcClient, startGrpcServer } from "./rpc.js";
import { Billing, RESOLVE, startTracedBilling, type TracedBilling, USAGE } from "./test-support/traced-billing.js";
import {
  readTracingEnv,
  setTracingRecording,
  startServerSpan,
  traceHeaders,
  tracingEnabled,
  withSpan,
} from "./tracing.js";

const SERVER = 2;
const CLIENT = 3;

let traced: TracedBilling;

beforeAll(async () => {
  expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://unused" })?.rpcClientSpans).toBe("errors");
  traced = await startTracedBilling("rpc-spans-test", {}, async () => {
    throw new NotFoundError("no such account");
  });
});
afterAll(() => traced?.close());

/** The spans of the trace `root` belongs to, once exported. */
async function traceOf(rootName: string) {
  await traced.tracing.flush();
  const root = traced.receiver.spans.find((s) => s.name === rootName);
  if (!root) throw new Error(`no span ${rootName}`);
  return { root, spans: traced.receiver.spans.filter((s) => s.traceId === root.traceId && s !== root) };
}

describe("gRPC client spans (TRACE_RPC_CLIENT_SPANS=errors)", () => {
  it("a call that succeeded: its server span is the caller span's child, and there is no client span", async () => {
    await withSpan("ok caller", {}, (_span, trace) => traced.client.resolveApiKey({ apiKey: "k" }, { trace }));
    const { root, spans } = await traceOf("ok caller");
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId])).toEqual([[RESOLVE, SERVER, root.spanId]]);
    expect(spans[0].attributes["rpc.grpc.status_code"]).toBe(0);
  });

  it("a call a handler failed: a client span with its code, beside the server span", async () => {
    await expect(
      withSpan("failing caller", {}, (_span, trace) => traced.client.getUsage({}, { trace })),
    ).rejects.toMatchObject({ httpStatus: 404 });
    const { root, spans } = await traceOf("failing caller");
    const clientSpan = spans.find((s) => s.kind === CLIENT);
    const serverSpan = spans.find((s) => s.kind === SERVER);
    expect(clientSpan).toMatchObject({ name: USAGE, parentSpanId: root.spanId, statusCode: 2 });
    expect(clientSpan?.attributes["rpc.grpc.status_code"]).toBe(5);
    expect(serverSpan).toMatchObject({ name: USAGE, parentSpanId: root.spanId, statusCode: 2 });
  });

  it("setTracingRecording(false) makes every helper pass through, as tracing off; true resumes", async () => {
    await traced.tracing.flush();
    const exported = traced.receiver.spans.length;
    try {
      setTracingRecording(false);
      expect(tracingEnabled()).toBe(false);
      const seen = await withSpan("paused caller", {}, async (span, trace) => {
        await traced.client.resolveApiKey({ apiKey: "k" }, { trace });
        return { span, trace };
      });
      expect(seen).toEqual({ span: undefined, trace: undefined });
      await traced.tracing.flush();
      expect(traced.receiver.spans.length).toBe(exported);
    } finally {
      setTracingRecording(true);
    }
    expect(tracingEnabled()).toBe(true);
    await withSpan("resumed caller", {}, (_span, trace) => traced.client.resolveApiKey({ apiKey: "k" }, { trace }));
    const { spans } = await traceOf("resumed caller");
    expect(spans.map((s) => s.name)).toEqual([RESOLVE]);
  });

  it("a handler's log lines and an unexpected failure's carry the call's request id and its server span's ids", async () => {
    const { lines, sink } = logLines();
    const handlers = {
      resolveApiKey: async (_req: unknown, ctx: CallContext) => {
        ctx.log.info("resolving");
        return accountsV1.ResolveApiKeyResponse.fromPartial({});
      },
      getUsage: async () => {
        throw new Error("the ledger is gone");
      },
    };
    const server = await startGrpcServer(
      "127.0.0.1:0",
      [bindService(Billing, handlers)],
      createLogger("test", "info", sink),
    );
    const client = createRpcClient(Billing, server.address);
    try {
      await withSpan("logging caller", {}, (_span, trace) =>
        client.resolveApiKey({ apiKey: "k" }, { trace, requestId: "r-logged" }),
      );
      await expect(
        withSpan("crashing caller", {}, (_span, trace) => client.getUsage({}, { trace, requestId: "r-crashed" })),
      ).rejects.toMatchObject({ code: 13 });
    } finally {
      client.close();
      await server.close(100);
    }
    const logged = await traceOf("logging caller");
    const crashed = await traceOf("crashing caller");
    const serverSpan = (spans: typeof logged.spans) => spans.find((s) => s.kind === SERVER);
    expect(lines.map((l) => [l.msg, l.rpc, l.requestId, l.trace_id, l.span_id])).toEqual([
      ["resolving", `/${RESOLVE}`, "r-logged", logged.root.traceId, serverSpan(logged.spans)?.spanId],
      ["unexpected error", `/${USAGE}`, "r-crashed", crashed.root.traceId, serverSpan(crashed.spans)?.spanId],
    ]);
  });

  it("calls from one span: a server span each under it, and a caller's tracestate goes on with its traceparent", async () => {
    // Each server parses a traceparent once and shares the context with the calls that send it
    // again (a turn's Chat span makes six): the spans must still be one per call.
    const seen: Record<string, string>[] = [];
    const handlers = {
      resolveApiKey: async (_req: unknown, ctx: CallContext) => {
        seen.push(traceHeaders(ctx.trace));
        return accountsV1.ResolveApiKeyResponse.fromPartial({});
      },
      getUsage: async () => billingV1.GetUsageResponse.fromPartial({}),
    };
    const server = await startGrpcServer(
      "127.0.0.1:0",
      [bindService(Billing, handlers)],
      createLogger("test", "silent"),
    );
    const client = createRpcClient(Billing, server.address);
    const remote = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "vendor=x" };
    try {
      await withSpan("fan-out caller", {}, async (_span, trace) => {
        for (let i = 0; i < 3; i++) await client.resolveApiKey({ apiKey: "k" }, { trace });
      });
      const caller = startServerSpan("stateful caller", remote, {});
      await client.resolveApiKey({ apiKey: "k" }, { trace: caller?.trace });
      caller?.span.end();
    } finally {
      client.close();
      await server.close(100);
    }
    const { root, spans } = await traceOf("fan-out caller");
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId])).toEqual(Array(3).fill([RESOLVE, SERVER, root.spanId]));
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(3);
    expect(seen.slice(0, 3).map((h) => h.traceparent)).toEqual(spans.map((s) => `00-${root.traceId}-${s.spanId}-01`));
    expect(seen[3]).toMatchObject({ tracestate: "vendor=x" });
    expect(seen[3].traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  });

  it("a call no server answered: a client span over its retries, with UNAVAILABLE", async () => {
    // A port nothing listens on: the client retries three times (100, 300, 900 ms) and gives up.
    const closed = await startGrpcServer("127.0.0.1:0", [], createLogger("test", "silent"));
    await closed.close(0);
    const gone = createRpcClient(Billing, closed.address);
    try {
      await expect(
        withSpan("unanswered caller", {}, (_span, trace) => gone.resolveApiKey({ apiKey: "k" }, { trace })),
      ).rejects.toMatchObject({ httpStatus: 503 });
    } finally {
      gone.close();
    }
    const { root, spans } = await traceOf("unanswered caller");
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId, s.statusCode])).toEqual([
      [RESOLVE, CLIENT, root.spanId, 2],
    ]);
    expect(spans[0].attributes["rpc.grpc.status_code"]).toBe(14);
    expect(spans[0].endMs - spans[0].startMs).toBeGreaterThanOrEqual(1300);
  });
});
