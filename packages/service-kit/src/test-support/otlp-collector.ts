// A scripted OTLP/HTTP collector for service-kit's tracing tests: a real HTTP server on
// 127.0.0.1 that accepts the JSON encoding @opentelemetry/exporter-trace-otlp-http sends and
// keeps each span's name, kind, ids, status, times and attributes.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One exported span as the collector saw it. */
export interface CollectedSpan {
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** Duration in ms. */
  durationMs: number;
  attributes: Record<string, unknown>;
}

interface Wire {
  resourceSpans?: {
    scopeSpans?: {
      spans?: {
        name: string;
        kind: number;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        status?: { code?: number };
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
        attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
      }[];
    }[];
  }[];
}

/** A running collector: `tracesUrl` is what initTracing posts to; `spans` fills as exports arrive. */
export interface OtlpCollector {
  tracesUrl: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

/** Starts a collector on a free port. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (c: Buffer) => body.push(c));
    req.on("end", () => {
      const sent = JSON.parse(Buffer.concat(body).toString("utf8")) as Wire;
      for (const r of sent.resourceSpans ?? [])
        for (const scope of r.scopeSpans ?? [])
          for (const s of scope.spans ?? [])
            spans.push({
              name: s.name,
              kind: s.kind,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              statusCode: s.status?.code ?? 0,
              durationMs: (Number(s.endTimeUnixNano ?? 0) - Number(s.startTimeUnixNano ?? 0)) / 1e6,
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a) => [
                  a.key,
                  a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.stringValue,
                ]),
              ),
            });
      res.setHeader("Content-Type", "application/json");
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
