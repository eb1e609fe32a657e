// Generated gRPC stubs (ts-proto, outputServices=grpc-js), one namespace per proto package.
// The files under gen/ are rebuilt by `pnpm codegen` and never committed.

/** JSON null in proto (google.protobuf.NullValue), e.g. PageSetup.margins_null. */
export { NullValue } from "./gen/google/protobuf/struct.js";
export * as healthV1 from "./gen/grpc/health/v1/health.js";
export * as accountsV1 from "./gen/redline/accounts/v1/accounts.js";
export * as agentV1 from "./gen/redline/agent/v1/agent.js";
export * as agentJobsV1 from "./gen/redline/agent/v1/jobs.js";
export * as agentRevertV1 from "./gen/redline/agent/v1/revert.js";
export * as billingV1 from "./gen/redline/billing/v1/billing.js";
export * as commonV1 from "./gen/redline/common/v1/page_setup.js";
export * as commonSourceV1 from "./gen/redline/common/v1/source.js";
export * as documentsV1 from "./gen/redline/documents/v1/documents.js";
export * as documentsLibraryV1 from "./gen/redline/documents/v1/library.js";
export * as edgePolicyV1 from "./gen/redline/edge/v1/edge_policy.js";
export * as ingestFilesV1 from "./gen/redline/ingest/v1/files.js";
export * as ingestV1 from "./gen/redline/ingest/v1/ingest.js";
export * as sessionsCheckpointsV1 from "./gen/redline/sessions/v1/checkpoints.js";
export * as sessionsV1 from "./gen/redline/sessions/v1/sessions.js";
export * as sessionsWorkspaceV1 from "./gen/redline/sessions/v1/workspace.js";
export * as webhooksV1 from "./gen/redline/webhooks/v1/webhooks.js";
