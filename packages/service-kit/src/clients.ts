// The gRPC clients services hold of one another, under one name each across the repo, so a
// service's context lists the names it calls instead of repeating definitions and addresses.
import {
  accountsV1,
  agentJobsV1,
  agentRevertV1,
  agentV1,
  billingV1,
  documentsLibraryV1,
  documentsV1,
  edgePolicyV1,
  ingestFilesV1,
  ingestV1,
  sessionsCheckpointsV1,
  sessionsV1,
  sessionsWorkspaceV1,
  webhooksV1,
} from "@redline/grpc-stubs";
import type { ServiceAddrs } from "./config.js";
import { createRpcClient, type RpcClient } from "./rpc.js";

/** Every client a service may hold: name → [gRPC service definition, the service that serves it]. */
export const SERVICE_CLIENTS = {
  agent: [agentV1.AgentServiceService, "agent"],
  /** Async chat jobs and their decisions (agent). */
  jobs: [agentJobsV1.JobsServiceService, "agent"],
  /** Revert and redo-revert (agent). */
  revert: [agentRevertV1.RevertServiceService, "agent"],
  /** Keys, user accounts, organizations, members, invitations, agents and handoffs (billing process). */
  accounts: [accountsV1.AccountsServiceService, "billing"],
  /** Quota reservations and settlements, usage, plans and promotions (billing). */
  billing: [billingV1.BillingServiceService, "billing"],
  /** The gateway's rate-limit buckets and idempotency records (billing process). */
  edgePolicy: [edgePolicyV1.EdgePolicyServiceService, "billing"],
  documents: [documentsV1.DocumentsServiceService, "documents"],
  /** The Files view, saves, archive, document events and conflicts (documents). */
  library: [documentsLibraryV1.DocumentLibraryServiceService, "documents"],
  /** Conversions of uploads (ingest). */
  ingest: [ingestV1.IngestServiceService, "ingest"],
  /** Exports, uploads, attachments and templates (ingest's FilesService). */
  files: [ingestFilesV1.FilesServiceService, "ingest"],
  sessions: [sessionsV1.SessionsServiceService, "sessions"],
  /** Rosters, holders, editor actions and memory notes (sessions). */
  workspace: [sessionsWorkspaceV1.SessionWorkspaceServiceService, "sessions"],
  /** Checkpoints: the sessions side of revert and redo-revert (sessions). */
  checkpoints: [sessionsCheckpointsV1.SessionCheckpointsServiceService, "sessions"],
  /** Outbound webhook endpoints and their delivery log (sessions process). */
  webhooks: [webhooksV1.WebhooksServiceService, "sessions"],
} as const;

export type ClientName = keyof typeof SERVICE_CLIENTS;

/** The clients named `N`, typed by their service definitions. */
export type Clients<N extends ClientName> = { [K in N]: RpcClient<(typeof SERVICE_CLIENTS)[K][0]> };

/** The addresses needed to dial the clients named `N`. */
type AddrsOf<N extends ClientName> = Pick<ServiceAddrs, (typeof SERVICE_CLIENTS)[N][1]>;

/**
 * One client per name, dialing its service's address; `overrides` (tests) replace clients by name,
 * and those are not created. Close them with closeClients.
 */
export function createClients<N extends ClientName>(
  addrs: AddrsOf<N>,
  names: readonly N[],
  overrides: Partial<Clients<N>> = {},
): Clients<N> {
  const entries = names.map((name) => {
    const [definition, service] = SERVICE_CLIENTS[name];
    return [name, overrides[name] ?? createRpcClient(definition, (addrs as ServiceAddrs)[service])];
  });
  return Object.fromEntries(entries) as Clients<N>;
}

/** Closes the clients named `names` held by `holder` (a context that spread createClients' result). */
export function closeClients<N extends ClientName>(names: readonly N[], holder: Clients<N>): void {
  for (const name of names) holder[name].close();
}
