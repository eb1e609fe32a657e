// A scripted OTLP/HTTP trace receiver: a real HTTP server on 127.0.0.1 that accepts
// `POST /v1/traces` in the JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends)
// and keeps every span, flattened with the service.name of its resource.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One received span: ids in hex as OTLP/JSON carries them, attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** Start and end, in ms since the epoch. */
  startMs: number;
  endMs: number;
}

/** OTLP span kinds as numbers on the wire. */
export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number };
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
      }[];
    }[];
  }[];
}

function plain(v: AnyValue): unknown {
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.boolValue ?? v.doubleValue;
}
const attrs = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, plain(kv.value)]));

/** A running receiver: `url` is the base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (also the ones a benchmark sink only counts). */
  requests: number;
  close(): Promise<void>;
}

/** Starts the receiver on a free port; answers 200 `{}` to every export, 404 elsewhere. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: "", spans: [], requests: 0, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      receiver.requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            receiver.spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              attributes: attrs(s.attributes),
              statusCode: s.status?.code ?? 0,
              startMs: Number(s.startTimeUnixNano ?? 0) / 1e6,
              endMs: Number(s.endTimeUnixNano ?? 0) / 1e6,
            });
          }
        }
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
