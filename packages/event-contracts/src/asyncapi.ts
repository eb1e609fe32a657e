// The AsyncAPI 3.0 document of Redline's NATS subjects, built from the same zod schemas and
// subject templates the producers and consumers import (index.ts), so the document cannot drift
// from the code. The gateway serves it at GET /asyncapi.json.
import { z } from "zod";
import {
  DOCUMENT_EVENT_TYPES,
  DOCUMENT_EVENTS_STREAM,
  DOCUMENT_EVENTS_SUBJECTS,
  DocumentEventSchema,
  documentEventSubject,
  ENVELOPE_EVENT_TYPES,
  JOB_LIFECYCLE_EVENTS,
  JOB_LIFECYCLE_STREAM,
  JobEventSchema,
  JobLifecycleEventSchema,
  jobLifecycleSubject,
  jobSubject,
} from "./index.js";

type Json = Record<string, unknown>;

/** A payload schema as JSON Schema (draft-07, which AsyncAPI 3.0's default schema format reads). */
function payloadOf(schema: z.ZodType): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-7" }) as Json;
  return rest;
}

/**
 * The AsyncAPI 3.0.0 document of the job-event and document-event subjects: channels (subject
 * templates with their parameters), operations (who sends, who receives) and message payloads.
 * `version` is the API version the gateway reports (the spec's interface version).
 */
export function buildAsyncApi(version: string): Json {
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Redline events",
      version,
      description:
        "NATS subjects of Redline's internal events. Postgres is the record of both streams; NATS fans them out. " +
        "Job events go over core NATS (a reader that misses one replays from the agent's GetJobEvents); document " +
        `events are published from documents' outbox to the JetStream stream ${DOCUMENT_EVENTS_STREAM} ` +
        `(subjects ${DOCUMENT_EVENTS_SUBJECTS.join(", ")}), de-duplicated by Nats-Msg-Id doc-event-<document_id>-<outbox id>.`,
    },
    defaultContentType: "application/json",
    servers: {
      nats: {
        host: "localhost:4222",
        protocol: "nats",
        description: "The deployment's NATS (NATS_URL); the embedded one in `pnpm start`.",
      },
    },
    channels: {
      jobEvents: {
        address: jobSubject("{job_id}"),
        title: "Events of one async chat job",
        description:
          `Every event of the job's progress stream, in sequence order. The SSE data of ${ENVELOPE_EVENT_TYPES.join(", ")} ` +
          "is the envelope {type, content, sequence, timestamp} (unshown-parts.md, Progress stream).",
        parameters: { job_id: { description: "The job's UUID." } },
        messages: { jobEvent: { $ref: "#/components/messages/jobEvent" } },
      },
      documentEvents: {
        address: documentEventSubject("{event_type}", "{owner_id}"),
        title: "Changes of saved documents",
        description: "One message per outbox row of the documents service, in id order per database.",
        parameters: {
          event_type: { description: "The event type.", enum: [...DOCUMENT_EVENT_TYPES] },
          owner_id: { description: "The owning account or organization's UUID." },
        },
        messages: { documentEvent: { $ref: "#/components/messages/documentEvent" } },
      },
      jobLifecycle: {
        address: jobLifecycleSubject("{status}", "{owner_id}"),
        title: "Jobs that completed, failed or started awaiting approval",
        description:
          `JetStream stream ${JOB_LIFECYCLE_STREAM}: one message per row of the agent's job outbox, written in the ` +
          "statement that changed the job's status; the webhooks consumer (sessions) enqueues deliveries from it.",
        parameters: {
          status: { description: "The job's new status.", enum: Object.keys(JOB_LIFECYCLE_EVENTS) },
          owner_id: { description: "The owning account or organization's UUID." },
        },
        messages: { jobLifecycleEvent: { $ref: "#/components/messages/jobLifecycleEvent" } },
      },
    },
    operations: {
      publishJobEvent: {
        action: "send",
        title: "The agent publishes each stored job event",
        channel: { $ref: "#/channels/jobEvents" },
        messages: [{ $ref: "#/channels/jobEvents/messages/jobEvent" }],
      },
      receiveJobEvent: {
        action: "receive",
        title: "The gateway relays job events to progress streams",
        channel: { $ref: "#/channels/jobEvents" },
        messages: [{ $ref: "#/channels/jobEvents/messages/jobEvent" }],
      },
      publishDocumentEvent: {
        action: "send",
        title: "Documents' outbox relay publishes each committed event",
        channel: { $ref: "#/channels/documentEvents" },
        messages: [{ $ref: "#/channels/documentEvents/messages/documentEvent" }],
      },
      publishJobLifecycleEvent: {
        action: "send",
        title: "The agent's job outbox relay publishes each lifecycle event",
        channel: { $ref: "#/channels/jobLifecycle" },
        messages: [{ $ref: "#/channels/jobLifecycle/messages/jobLifecycleEvent" }],
      },
      receiveJobLifecycleEvent: {
        action: "receive",
        title: "The webhooks consumer (a durable JetStream consumer) enqueues deliveries",
        channel: { $ref: "#/channels/jobLifecycle" },
        messages: [{ $ref: "#/channels/jobLifecycle/messages/jobLifecycleEvent" }],
      },
      receiveDocumentEvent: {
        action: "receive",
        title: "Consumers (a durable JetStream consumer) receive document events",
        channel: { $ref: "#/channels/documentEvents" },
        messages: [{ $ref: "#/channels/documentEvents/messages/documentEvent" }],
      },
    },
    components: {
      messages: {
        jobEvent: {
          name: "JobEvent",
          title: "Job event",
          contentType: "application/json",
          headers: {
            type: "object",
            properties: { traceparent: { type: "string", description: "W3C trace context of the run." } },
          },
          payload: payloadOf(JobEventSchema),
        },
        documentEvent: {
          name: "DocumentEvent",
          title: "Document event",
          contentType: "application/json",
          headers: {
            type: "object",
            properties: {
              "Nats-Msg-Id": { type: "string", description: "doc-event-<document_id>-<outbox id>" },
              traceparent: { type: "string", description: "W3C trace context of the write." },
            },
          },
          payload: payloadOf(DocumentEventSchema),
        },
        jobLifecycleEvent: {
          name: "JobLifecycleEvent",
          title: "Job lifecycle event",
          contentType: "application/json",
          headers: {
            type: "object",
            properties: { "Nats-Msg-Id": { type: "string", description: "job-event-<job_id>-<outbox id>" } },
          },
          payload: payloadOf(JobLifecycleEventSchema),
        },
      },
    },
  };
}
