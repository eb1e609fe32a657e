// GET /asyncapi.json (#35): the AsyncAPI 3.0 document of the NATS subjects, served by a real
// gateway over HTTP (its backends down: the route needs none), valid for @asyncapi/parser, its
// channel addresses the very subject templates producers publish to, and its payloads the fields
// of the contracts' schemas.
import { Parser } from "@asyncapi/parser";
import { documentEventSubject, jobLifecycleSubject, jobSubject } from "@redline/event-contracts";
import { gatewayConfig, type RunningGateway, startGateway } from "@redline/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLOSED = "127.0.0.1:1";
const addrs = { documents: CLOSED, sessions: CLOSED, agent: CLOSED, billing: CLOSED, ingest: CLOSED };

let gw: RunningGateway;
let doc: Record<string, unknown>;

beforeAll(async () => {
  gw = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent" }));
  const res = await fetch(`${gw.url}/asyncapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = (await res.json()) as Record<string, unknown>;
});

afterAll(async () => {
  await gw?.close();
});

/** The document parsed by the AsyncAPI parser; throws with the diagnostics when it is invalid. */
async function parsed() {
  const parser = new Parser();
  const { document, diagnostics } = await parser.parse(JSON.stringify(doc));
  // Severity 0 is an error; warnings (style hints such as a missing license) do not make it invalid.
  const errors = diagnostics.filter((d) => d.severity === 0);
  expect(errors.map((d) => `${d.path.join(".")}: ${d.message}`)).toEqual([]);
  if (!document) throw new Error("the parser returned no document");
  return document;
}

describe("asyncapi.json", () => {
  it("is a valid AsyncAPI 3.0 document, public like /openapi.json", async () => {
    expect(doc.asyncapi).toBe("3.0.0");
    const document = await parsed();
    expect(document.version()).toBe("3.0.0");
    expect(
      document
        .channels()
        .all()
        .map((c) => c.address()),
    ).toEqual([
      jobSubject("{job_id}"),
      documentEventSubject("{event_type}", "{owner_id}"),
      jobLifecycleSubject("{status}", "{owner_id}"),
    ]);
    expect(
      document
        .operations()
        .all()
        .map((o) => `${o.action()} ${o.channels().all()[0]?.address()}`),
    ).toEqual([
      "send redline.jobs.v1.{job_id}",
      "receive redline.jobs.v1.{job_id}",
      "send redline.documents.v1.{event_type}.{owner_id}",
      "send redline.job-lifecycle.v1.{status}.{owner_id}",
      "receive redline.job-lifecycle.v1.{status}.{owner_id}",
      "receive redline.documents.v1.{event_type}.{owner_id}",
    ]);
  });

  it("documents the payloads producers publish, field by field", async () => {
    const document = await parsed();
    const payloadOf = (name: string) => {
      const message = document
        .messages()
        .all()
        .find((m) => m.name() === name);
      if (!message) throw new Error(`no message ${name}`);
      return message.payload()?.json() as { required: string[]; properties: Record<string, { type?: unknown }> };
    };
    const job = payloadOf("JobEvent");
    expect(job.required.sort()).toEqual(["created_at", "data", "sequence", "type"]);
    expect(job.properties.sequence.type).toBe("integer");

    const documentEvent = payloadOf("DocumentEvent");
    expect(Object.keys(documentEvent.properties).sort()).toEqual(
      ["created_at", "document_id", "id", "owner_id", "payload", "session_id", "type", "version_id"].sort(),
    );
    expect(documentEvent.properties.type).toMatchObject({ enum: ["document_created", "document_updated"] });

    const lifecycle = payloadOf("JobLifecycleEvent");
    expect(lifecycle.properties.type).toMatchObject({ enum: ["job.completed", "job.failed", "job.awaiting_approval"] });
  });
});
