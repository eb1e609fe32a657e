// Generated gRPC stubs (ts-proto, outputServices=grpc-js), one namespace per proto package.
// The files under gen/ are rebuilt by `pnpm codegen` and never committed.

export * as healthV1 from "./gen/grpc/health/v1/health.js";
export * as agentV1 from "./gen/redline/agent/v1/agent.js";
export * as billingV1 from "./gen/redline/billing/v1/billing.js";
export * as documentsV1 from "./gen/redline/documents/v1/documents.js";
export * as ingestV1 from "./gen/redline/ingest/v1/ingest.js";
export * as sessionsV1 from "./gen/redline/sessions/v1/sessions.js";
