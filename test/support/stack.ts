// Boots the whole Redline stack in-process on random ports against real Postgres, NATS and S3:
// each of the five services through its own library entry, then the gateway. System tests and
// the benchmark drive it over HTTP exactly as a client would.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JobsConfig, type OpenAiEngineConfig, startAgentService } from "@redline/agent";
import { startBillingService } from "@redline/billing";
import { startDocumentsService } from "@redline/documents";
import { type GatewayConfig, startGateway } from "@redline/gateway";
import { accountsV1, billingV1, edgePolicyV1 } from "@redline/grpc-stubs";
import { type IngestConfig, startIngestService } from "@redline/ingest";
import { createTestDatabase } from "@redline/local-infra";
import type { Knex } from "@redline/service-kit";
import { createRpcClient, type RpcClient, type S3Config } from "@redline/service-kit";
import { startSessionsService, type WebhooksConfig } from "@redline/sessions";

/** Infrastructure the stack runs on; `databaseUrl` is an admin URL (a database per stack is created). */
export interface StackInfra {
  databaseUrl: string;
  natsUrl: string;
  s3: S3Config;
}

/** Options of one stack. */
export interface StackOptions {
  /** Use this OpenAI-compatible provider instead of the offline engine. */
  openai?: OpenAiEngineConfig;
  aiTimeoutMs?: number;
  maxRequestMb?: number;
  authCacheTtlMs?: number;
  /** Prefix of the stack's own database name. */
  name?: string;
  /** The agent's job worker pool (short leases and retention in tests). */
  jobs?: Partial<JobsConfig>;
  /** Period of the agent's record outbox relay, in ms (default 2 s). */
  turnRecordRelayMs?: number;
  /** Comment heartbeat period of progress streams. */
  streamHeartbeatMs?: number;
  /** The gateway's REQUEST_TIMEOUT_MS and HEADERS_TIMEOUT_MS (slow-client tests make them short). */
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** Ingest overrides (export caps, mail); its database and object store always come from the infra. */
  ingest?: Partial<IngestConfig>;
  /** The gateway's per-key rate limits (default DEFAULT_RATE_LIMITS; a benchmark's pace exceeds them). */
  rateLimits?: GatewayConfig["rateLimits"];
  /** The gateway's per-account rate limits (default: twice the per-key ones, accountLimitsFor). */
  accountRateLimits?: GatewayConfig["accountRateLimits"];
  /** The gateway's TRUST_PROXY (default: no proxy trusted). */
  trustProxy?: GatewayConfig["trustProxy"];
  /**
   * The gateway's per-source limits (default TEST_SOURCE_LIMITS: every test file calls from
   * 127.0.0.1, and some make hundreds of 401 calls or sign-ups on purpose).
   */
  sourceLimits?: GatewayConfig["sourceLimits"];
  /** Sessions' webhook settings (WEBHOOK_ALLOW_PRIVATE for a receiver on 127.0.0.1, a short retry base). */
  webhooks?: Partial<WebhooksConfig>;
}

/** Per-source limits no test meets by accident; tests of the limits pass their own. */
export const TEST_SOURCE_LIMITS = { authFailuresPerMinute: 100_000, anonymousPerMinute: 100_000 };

/** A running stack. */
export interface TestStack {
  /** Gateway base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** gRPC addresses of the services, for benchmarks that call one directly. */
  addrs: { documents: string; sessions: string; billing: string; ingest: string; agent: string };
  databaseUrl: string;
  documentsDb: Knex;
  sessionsDb: Knex;
  /** The agent's pool (schema `agent`: jobs and job events). */
  agentDb: Knex;
  /** Creates an API key (and accounts) through AccountsService, like `pnpm admin keys create`. */
  createKey(user: string, opts?: { org?: string; plan?: string }): Promise<string>;
  /**
   * The raw messages ingest's mail sink wrote, oldest first: every mail of a stack started
   * without `ingest.mail` (a stack with SMTP reads its scripted server instead).
   */
  sentMail(): Promise<string[]>;
  /**
   * Sets `email` on the key's user and verifies it with the code the sink received, as a user
   * reading their mail would (PATCH /v1/users/me, then POST /v1/users/me/email/verify).
   */
  verifyEmail(key: string, email: string): Promise<void>;
  /** The billing client, for arranging usage in quota tests through the real service. */
  billing: RpcClient<typeof billingV1.BillingServiceService>;
  /** The accounts client (keys, principals, organizations), served by the billing process. */
  accounts: RpcClient<typeof accountsV1.AccountsServiceService>;
  /** The edge-policy client (rate-limit buckets, idempotency records), served by the billing process. */
  edgePolicy: RpcClient<typeof edgePolicyV1.EdgePolicyServiceService>;
  revokeKey(key: string): Promise<boolean>;
  /** fetch against the gateway with a bearer key and JSON body. */
  call(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  close(): Promise<void>;
}

const LOCAL = "127.0.0.1:0";

/** Starts the services and the gateway; close() stops them in reverse order. */
export async function startTestStack(infra: StackInfra, opts: StackOptions = {}): Promise<TestStack> {
  const databaseUrl = await createTestDatabase(infra.databaseUrl, opts.name ?? "stack");
  // Each stack's own sink, so one file's mails never show up in another's.
  const mailSink = opts.ingest?.mail ? undefined : await mkdtemp(join(tmpdir(), "redline-mail-"));
  const logLevel = process.env.TEST_LOG_LEVEL ?? "silent";
  // Sessions calls documents (its workspace workflows), so documents starts first.
  const documents = await startDocumentsService({ grpcAddress: LOCAL, databaseUrl, natsUrl: infra.natsUrl, logLevel });
  // Ingest asks accounts (in the billing process) for the caller's email on file (email exports
  // without a recipient), and documents which stored originals are still named (its retention sweep).
  // testClock: billing-buckets.test.ts moves billing's clock (SetTestClock) across periods and expiries.
  const billingStarted = startBillingService({ grpcAddress: LOCAL, databaseUrl, logLevel, testClock: true });
  const [sessions, billing, ingest] = await Promise.all([
    startSessionsService({
      grpcAddress: LOCAL,
      databaseUrl,
      natsUrl: infra.natsUrl,
      // Stacks share one NATS: each its own durable consumers, so no stack acks another's events.
      webhooks: { ...opts.webhooks, consumer: `webhooks-${new URL(databaseUrl).pathname.slice(1)}` },
      addrs: { documents: documents.address },
      logLevel,
    }),
    billingStarted,
    billingStarted.then((started) =>
      startIngestService({
        grpcAddress: LOCAL,
        maxUploadBytes: (opts.maxRequestMb ?? 100) * 1024 * 1024,
        logLevel,
        databaseUrl,
        s3: infra.s3,
        addrs: { billing: started.address, documents: documents.address },
        ...(mailSink && { mail: { sinkDir: mailSink } }),
        ...opts.ingest,
      }),
    ),
  ]);
  const addrs = {
    documents: documents.address,
    sessions: sessions.address,
    billing: billing.address,
    ingest: ingest.address,
  };
  const agent = await startAgentService({
    grpcAddress: LOCAL,
    addrs,
    aiTimeoutMs: opts.aiTimeoutMs ?? 30 * 60 * 1000,
    openai: opts.openai,
    historyTurns: 10,
    logLevel,
    databaseUrl,
    natsUrl: infra.natsUrl,
    jobs: opts.jobs,
    turnRecordRelayMs: opts.turnRecordRelayMs,
  });
  const gateway = await startGateway({
    host: "127.0.0.1",
    port: 0,
    addrs: { ...addrs, agent: agent.address },
    maxRequestMb: opts.maxRequestMb ?? 100,
    supportEmail: "support@redline.local",
    aiTimeoutMs: opts.aiTimeoutMs ?? 30 * 60 * 1000,
    authCacheTtlMs: opts.authCacheTtlMs ?? 5000,
    logLevel,
    natsUrl: infra.natsUrl,
    streamHeartbeatMs: opts.streamHeartbeatMs,
    requestTimeoutMs: opts.requestTimeoutMs,
    headersTimeoutMs: opts.headersTimeoutMs,
    rateLimits: opts.rateLimits,
    accountRateLimits: opts.accountRateLimits,
    trustProxy: opts.trustProxy,
    sourceLimits: opts.sourceLimits ?? TEST_SOURCE_LIMITS,
  });
  const billingClient = createRpcClient(billingV1.BillingServiceService, billing.address);
  const accountsClient = createRpcClient(accountsV1.AccountsServiceService, billing.address);
  const edgePolicyClient = createRpcClient(edgePolicyV1.EdgePolicyServiceService, billing.address);
  const stack: TestStack = {
    url: gateway.url,
    addrs: { ...addrs, agent: agent.address },
    databaseUrl,
    documentsDb: documents.db,
    sessionsDb: sessions.context.db,
    agentDb: agent.context.db,
    billing: billingClient,
    accounts: accountsClient,
    edgePolicy: edgePolicyClient,
    async createKey(user, keyOpts = {}) {
      const res = await accountsClient.createApiKey({
        user,
        organization: keyOpts.org ?? "",
        plan: keyOpts.plan ?? "",
      });
      return res.apiKey;
    },
    async sentMail() {
      if (!mailSink) return [];
      const names = (await readdir(mailSink)).sort();
      return Promise.all(names.map((n) => readFile(join(mailSink, n), "utf8")));
    },
    async verifyEmail(key, email) {
      const before = (await stack.sentMail()).length;
      const set = await stack.call("PATCH", "/v1/users/me", { key, body: { email } });
      if (set.status !== 200) throw new Error(`PATCH /v1/users/me: ${set.status} ${await set.text()}`);
      const mail = (await stack.sentMail()).slice(before).find((m) => m.includes(`To: ${email}`));
      const code = mail && verificationCode(mail);
      if (!code) throw new Error(`no verification code was mailed to ${email}`);
      const done = await stack.call("POST", "/v1/users/me/email/verify", { key, body: { code } });
      if (done.status !== 200) throw new Error(`verify: ${done.status} ${await done.text()}`);
    },
    async revokeKey(key) {
      return (await accountsClient.revokeApiKey({ apiKey: key })).revoked;
    },
    call(method, path, callOpts = {}) {
      const headers: Record<string, string> = { ...callOpts.headers };
      if (callOpts.key) headers.Authorization = `Bearer ${callOpts.key}`;
      let body: string | undefined;
      if (callOpts.body !== undefined) {
        headers["Content-Type"] = "application/json";
        body = typeof callOpts.body === "string" ? callOpts.body : JSON.stringify(callOpts.body);
      }
      return fetch(`${gateway.url}${path}`, { method, headers, body });
    },
    async close() {
      billingClient.close();
      accountsClient.close();
      edgePolicyClient.close();
      await gateway.close();
      await agent.close();
      await Promise.all([documents.close(), sessions.close(), billing.close(), ingest.close()]);
      if (mailSink) await rm(mailSink, { recursive: true, force: true });
    },
  };
  return stack;
}

/** The code of a verification mail (its "Verification code: …" line), or undefined. */
export function verificationCode(rawMail: string): string | undefined {
  return /Verification code: (\S+)/.exec(rawMail)?.[1];
}
