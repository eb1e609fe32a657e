// The fixture of the gRPC span tests: tracing on in this process, exporting to the system tests'
// scripted OTLP receiver, and two methods of the billing process (accounts' ResolveApiKey, billing's
// GetUsage) served and called through service-kit's real server and client.
import { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { type OtlpReceiver, startOtlpReceiver } from "../../../../test/support/otlp-receiver.js";
import { createLogger } from "../logger.js";
import { bindService, createRpcClient, type RpcClient, startGrpcServer } from "../rpc.js";
import { initTracing, readTracingEnv, type Tracing } from "../tracing.js";

export const Billing = {
  resolveApiKey: accountsV1.AccountsServiceService.resolveApiKey,
  getUsage: billingV1.BillingServiceService.getUsage,
};
export const RESOLVE = "redline.accounts.v1.AccountsService/ResolveApiKey";
export const USAGE = "redline.billing.v1.BillingService/GetUsage";

/** A traced process with a billing server: what the tests read, call and close. */
export interface TracedBilling {
  receiver: OtlpReceiver;
  tracing: Tracing;
  client: RpcClient<typeof Billing>;
  close(): Promise<void>;
}

/**
 * Starts the receiver, initTracing from `env` (the OTEL_* variables, the endpoint added) under
 * `service`, and a server answering ResolveApiKey with an empty principal and GetUsage with
 * `getUsage`.
 */
export async function startTracedBilling(
  service: string,
  env: Record<string, string>,
  getUsage: () => Promise<billingV1.GetUsageResponse>,
): Promise<TracedBilling> {
  const receiver = await startOtlpReceiver();
  const tracing = initTracing(service, readTracingEnv({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
  const handlers = { resolveApiKey: async () => accountsV1.ResolveApiKeyResponse.fromPartial({}), getUsage };
  const server = await startGrpcServer("127.0.0.1:0", [bindService(Billing, handlers)], createLogger("test", "silent"));
  const client = createRpcClient(Billing, server.address);
  return {
    receiver,
    tracing,
    client,
    close: async () => {
      client.close();
      await server.close(100);
      await tracing.shutdown();
      await receiver.close();
    },
  };
}
