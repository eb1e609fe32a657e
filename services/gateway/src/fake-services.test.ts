// The gateway against in-process fake gRPC services (real gRPC, no database): auth and its
// cache, the principal and request id in metadata, and the HTTP shapes of endpoints 1, 2 and 19.
import { agentV1, billingV1, documentsV1, healthV1, sessionsV1 } from "@redline/grpc-stubs";
import {
  bindService,
  type CallContext,
  createLogger,
  NotFoundError,
  QuotaExceededError,
  type RunningServer,
  startGrpcServer,
  UnauthenticatedError,
  UnavailableError,
} from "@redline/service-kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { gatewayConfig } from "./config.js";
import { type RunningGateway, startGateway } from "./service.js";

const GOOD = `sk_${"a".repeat(32)}`;
const OTHER = `sk_${"b".repeat(32)}`;
const principal = { userId: "u1", organizationId: "", ownerId: "u1", plan: "free", keyId: "k1" };
const usage = {
  monthlyUsed: 3,
  monthlyLimit: 500,
  monthlyRemaining: 497,
  wasBillable: true,
  opsCharged: 1,
  quotaExhausted: false,
  subscriptionTier: "free",
  bucketUsed: "monthly",
};
const t0 = new Date("2026-01-02T03:04:05.000Z");

/** Knobs and records of the fakes, reset before each test. */
const fake = {
  validKeys: new Set<string>(),
  resolveCalls: 0,
  seen: [] as { rpc: string; ownerId: string | undefined; requestId: string; request: unknown }[],
  chat: async (_req: agentV1.ChatRequest): Promise<agentV1.ChatResponse> => {
    throw new Error("unset");
  },
  roster: [] as sessionsV1.RosterEntry[],
  documentMissing: false,
};

const unused = async (): Promise<never> => {
  throw new UnavailableError("not in the fake");
};

function record(rpc: string, request: unknown, ctx: CallContext) {
  fake.seen.push({ rpc, ownerId: ctx.principal?.ownerId, requestId: ctx.requestId, request });
}

let server: RunningServer;
let gw: RunningGateway;
let uncached: RunningGateway;

beforeAll(async () => {
  const log = createLogger("fakes", "silent");
  server = await startGrpcServer(
    "127.0.0.1:0",
    [
      bindService(billingV1.BillingServiceService, {
        async resolveApiKey(req) {
          fake.resolveCalls++;
          if (!fake.validKeys.has(req.apiKey)) throw new UnauthenticatedError("Invalid or revoked API key");
          return { principal };
        },
        createApiKey: unused,
        revokeApiKey: unused,
        getUsage: unused,
        reserveOperations: unused,
        settleOperations: unused,
      }),
      bindService(agentV1.AgentServiceService, {
        async chat(req, ctx) {
          record("chat", req, ctx);
          return fake.chat(req);
        },
      }),
      bindService(sessionsV1.SessionsServiceService, {
        ensureSession: unused,
        getSession: unused,
        attachDocument: unused,
        appendTurn: unused,
        async listSessions(req, ctx) {
          record("listSessions", req, ctx);
          return {
            sessions: [
              { sessionId: "s1", createdAt: t0, updatedAt: t0, messageCount: 2, title: "Report", roster: fake.roster },
            ],
          };
        },
        async getHistory(req, ctx) {
          record("getHistory", req, ctx);
          if (req.sessionId === "missing") throw new NotFoundError("Session not found");
          return {
            session: {
              sessionId: req.sessionId,
              createdAt: t0,
              updatedAt: t0,
              messageCount: 2,
              title: "Report",
              roster: fake.roster,
            },
            messages: [
              { id: "m1", sender: "user", content: "Fix it", timestamp: t0, turnIndex: 0, checkpointId: "v1" },
              { id: "m2", sender: "ai", content: "Done", timestamp: t0, turnIndex: 0, checkpointId: "" },
            ],
          };
        },
      }),
      bindService(documentsV1.DocumentsServiceService, {
        createDocument: unused,
        replaceDocument: unused,
        commitOperations: unused,
        async getDocument(req, ctx) {
          record("getDocument", req, ctx);
          if (fake.documentMissing) throw new NotFoundError("Document not found");
          return {
            document: {
              documentId: req.documentId,
              title: `Doc ${req.documentId}`,
              versionId: "v2",
              chunkCount: 2,
              sectionCount: 1,
              pageSetupJson: "",
              archived: false,
              createdAt: t0,
              updatedAt: t0,
            },
            chunks: [
              { chunkId: "c1", html: '<h1 data-chunk-id="c1">Title</h1>' },
              { chunkId: "c2", html: '<p data-chunk-id="c2">Body</p>' },
            ],
          };
        },
      }),
      bindService(healthV1.HealthService, {
        async check() {
          return { status: healthV1.HealthCheckResponse_ServingStatus.SERVING };
        },
      }),
    ],
    log,
  );
  const addrs = {
    documents: server.address,
    sessions: server.address,
    agent: server.address,
    billing: server.address,
    ingest: "127.0.0.1:1",
  };
  gw = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", authCacheTtlMs: 60_000 }));
  uncached = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", authCacheTtlMs: 0 }));
});

afterAll(async () => {
  await gw?.close();
  await uncached?.close();
  await server?.close();
});

beforeEach(() => {
  fake.validKeys = new Set([GOOD]);
  fake.resolveCalls = 0;
  fake.seen = [];
  fake.roster = [];
  fake.documentMissing = false;
  fake.chat = async (req) => ({
    response: `You said: ${req.message}`,
    sessionId: req.sessionId || "minted",
    documentChanges: {
      updatedHtml: req.responseMode === "compact" ? undefined : '<p data-chunk-id="c1">New</p>',
      versionId: "v2",
      changesSummary: "Edited 1 section",
      requiresApproval: false,
      changes: [
        {
          changeId: "ch1",
          operation: "edit",
          chunkId: "c1",
          documentId: "d1",
          oldHtml: "<p>Old</p>",
          newHtml: "<p>New</p>",
          aiExplanation: "Clearer",
          insertAfterChunkId: "",
        },
        {
          changeId: "ch2",
          operation: "create",
          chunkId: "c9",
          documentId: "d1",
          oldHtml: "",
          newHtml: "<p>Added</p>",
          aiExplanation: "Added",
          insertAfterChunkId: "",
        },
      ],
      chunkDiffs: [],
      documentId: "d1",
    },
    usage,
    turnIndex: 0,
    engine: "offline",
  });
});

async function call(base: RunningGateway, path: string, init: RequestInit & { json?: unknown; key?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${init.key ?? GOOD}`);
  if (init.json !== undefined) headers.set("Content-Type", "application/json");
  const res = await fetch(`${base.url}${path}`, {
    ...init,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe("POST /v1/chat", () => {
  it("runs the turn with the principal and request id in metadata and maps the result", async () => {
    const res = await call(gw, "/v1/chat", {
      method: "POST",
      headers: { "X-Request-Id": "trace-1" },
      json: {
        message: "Make it clearer",
        session_id: "s1",
        upload_document_base64: { filename: "a.txt", file_base64: Buffer.from("hello").toString("base64") },
        model_tier: "pro",
        unknown_field: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-usage-limit")).toBe("500");
    expect(res.headers.get("x-usage-used")).toBe("3");
    expect(res.headers.get("x-usage-remaining")).toBe("497");
    expect(res.body).toEqual({
      response: "You said: Make it clearer",
      session_id: "s1",
      document_changes: {
        updated_html: '<p data-chunk-id="c1">New</p>',
        version_id: "v2",
        changes_summary: "Edited 1 section",
        requires_approval: false,
        pending_changes: [],
        changes: [
          {
            change_id: "ch1",
            operation: "edit",
            chunk_id: "c1",
            document_id: "d1",
            old_html: "<p>Old</p>",
            new_html: "<p>New</p>",
            ai_explanation: "Clearer",
          },
          {
            change_id: "ch2",
            operation: "create",
            chunk_id: "c9",
            document_id: "d1",
            old_html: "",
            new_html: "<p>Added</p>",
            ai_explanation: "Added",
            insert_after_chunk_id: null,
          },
        ],
        chunk_diffs: [],
        document_id: "d1",
      },
      usage: {
        monthly_used: 3,
        monthly_limit: 500,
        monthly_remaining: 497,
        was_billable: true,
        ops_charged: 1,
        quota_exhausted: false,
        subscription_tier: "free",
        bucket_used: "monthly",
        redemption_id: null,
        promotions: [],
      },
    });
    const seen = fake.seen.find((s) => s.rpc === "chat");
    expect(seen?.ownerId).toBe("u1");
    expect(seen?.requestId).toBe("trace-1");
    const req = seen?.request as agentV1.ChatRequest;
    expect(Buffer.from(req.upload?.content ?? []).toString("utf8")).toBe("hello");
    expect(req.modelTier).toBe("pro");
    expect(req.thinkingDepth).toBe("balanced");
  });

  it("omits updated_html in compact mode", async () => {
    const res = await call(gw, "/v1/chat", { method: "POST", json: { message: "hi", response_mode: "compact" } });
    expect(res.status).toBe(200);
    const changes = res.body.document_changes as Record<string, unknown>;
    expect(changes).not.toHaveProperty("updated_html");
    expect(changes.version_id).toBe("v2");
  });

  it("answers an empty or blank message with 400", async () => {
    for (const message of ["", "   \n"]) {
      const res = await call(gw, "/v1/chat", { method: "POST", json: { message } });
      expect(res).toMatchObject({ status: 400, body: { detail: "message must not be empty" } });
    }
    expect(fake.seen).toHaveLength(0);
  });

  it("validates after auth: 401 for a bad key, then 422 with pydantic-like items", async () => {
    const bad = await call(gw, "/v1/chat", { method: "POST", json: { model_tier: "x" }, key: OTHER });
    expect(bad.status).toBe(401);
    const res = await call(gw, "/v1/chat", { method: "POST", json: { model_tier: "x" } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { type: "missing", loc: ["body", "message"], msg: "Field required" },
      { type: "enum", loc: ["body", "model_tier"], msg: "Input should be 'core', 'turbo', 'pro' or 'max'" },
    ]);
  });

  it("answers a non-JSON body with 422", async () => {
    const res = await call(gw, "/v1/chat", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "hello",
    });
    expect(res.status).toBe(422);
    expect((res.body.detail as { type: string }[])[0].type).toBe("model_attributes_type");
  });

  it("passes the agent's 429 through with Retry-After and X-Usage-*", async () => {
    fake.chat = async () => {
      throw new QuotaExceededError(500, 500, 3600, { monthly_used: 500 });
    };
    const res = await call(gw, "/v1/chat", { method: "POST", json: { message: "hi" } });
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ detail: "Monthly operations quota exhausted", code: "quota_exhausted" });
    expect(res.headers.get("retry-after")).toBe("3600");
    expect(res.headers.get("x-usage-remaining")).toBe("0");
  });

  it("hides an unexpected agent failure behind a plain 500", async () => {
    fake.chat = async () => {
      throw new Error("database password is hunter2");
    };
    const res = await call(gw, "/v1/chat", { method: "POST", json: { message: "hi" } });
    expect(res).toMatchObject({ status: 500, body: { detail: "Internal server error" } });
    expect(JSON.stringify(res.body)).not.toContain("hunter2");
  });
});

describe("auth cache", () => {
  it("caches a resolved key and never caches a failure", async () => {
    const fresh = `sk_${"c".repeat(32)}`;
    fake.validKeys.add(fresh);
    await call(gw, "/v1/sessions", { key: fresh });
    await call(gw, "/v1/sessions", { key: fresh });
    expect(fake.resolveCalls).toBe(1);
    await call(gw, "/v1/sessions", { key: OTHER });
    await call(gw, "/v1/sessions", { key: OTHER });
    expect(fake.resolveCalls).toBe(3);
    fake.validKeys.add(OTHER);
    expect((await call(gw, "/v1/sessions", { key: OTHER })).status).toBe(200);
  });

  it("sees a revocation once the cache entry expires (TTL 0 here)", async () => {
    expect((await call(uncached, "/v1/sessions")).status).toBe(200);
    fake.validKeys.delete(GOOD);
    const res = await call(uncached, "/v1/sessions");
    expect(res).toMatchObject({ status: 401, body: { detail: "Invalid or revoked API key" } });
  });
});

describe("GET /v1/sessions", () => {
  it("lists sessions with ISO timestamps and passes limit", async () => {
    fake.roster = [
      {
        documentId: "primary",
        durableDocumentId: "d1",
        title: "T",
        focused: true,
        lastSeenVersionId: "v1",
        openedAt: t0,
      },
    ];
    const res = await call(gw, "/v1/sessions?limit=5&user_id=ignored");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      sessions: [
        {
          session_id: "s1",
          title: "Report",
          created_at: "2026-01-02T03:04:05.000Z",
          last_updated: "2026-01-02T03:04:05.000Z",
          message_count: 2,
          document_count: 1,
        },
      ],
      total: 1,
    });
    expect(fake.seen.find((s) => s.rpc === "listSessions")?.request).toEqual({ limit: 5 });
  });

  it("rejects a bad limit with 422", async () => {
    const res = await call(gw, "/v1/sessions?limit=0");
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { type: "greater_than_equal", loc: ["query", "limit"], msg: "Input should be greater than or equal to 1" },
    ]);
  });
});

describe("GET /v1/sessions/{session_id}/history", () => {
  const roster: sessionsV1.RosterEntry[] = [
    {
      documentId: "primary",
      durableDocumentId: "d1",
      title: "One",
      focused: true,
      lastSeenVersionId: "v1",
      openedAt: t0,
    },
    {
      documentId: "doc_2",
      durableDocumentId: "d2",
      title: "Two",
      focused: false,
      lastSeenVersionId: "v1",
      openedAt: t0,
    },
  ];

  it("restores messages and the focused document with its chunk HTML", async () => {
    fake.roster = roster;
    const res = await call(gw, "/v1/sessions/s1/history");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      session_id: "s1",
      messages: [
        {
          id: "m1",
          sender: "user",
          content: "Fix it",
          timestamp: "2026-01-02T03:04:05.000Z",
          turn_index: 0,
          checkpoint_id: "v1",
        },
        {
          id: "m2",
          sender: "ai",
          content: "Done",
          timestamp: "2026-01-02T03:04:05.000Z",
          turn_index: 0,
          checkpoint_id: null,
        },
      ],
      document_state: {
        document_id: "primary",
        durable_document_id: "d1",
        title: "Doc d1",
        html_content: '<h1 data-chunk-id="c1">Title</h1>\n<p data-chunk-id="c2">Body</p>',
        version_id: "v2",
        chunk_count: 2,
        last_modified: "2026-01-02T03:04:05.000Z",
        attachments: [],
      },
      attachments: [],
      editor_actions: [],
      editor_action: "update",
    });
    expect(fake.seen.find((s) => s.rpc === "getDocument")?.request).toMatchObject({
      documentId: "d1",
      includeChunks: true,
    });
  });

  it("focuses the requested durable id and can omit the HTML", async () => {
    fake.roster = roster;
    const res = await call(gw, "/v1/sessions/s1/history?focus_document_id=d2&include_document_html=false");
    const state = res.body.document_state as Record<string, unknown>;
    expect(state).toMatchObject({ document_id: "doc_2", durable_document_id: "d2" });
    expect(state).not.toHaveProperty("html_content");
  });

  it("ignores a focus id that is not in the roster", async () => {
    fake.roster = roster;
    const res = await call(gw, "/v1/sessions/s1/history?focus_document_id=elsewhere");
    expect((res.body.document_state as Record<string, unknown>).document_id).toBe("primary");
  });

  it("answers clear when the session holds no document or it vanished", async () => {
    const empty = await call(gw, "/v1/sessions/s1/history");
    expect(empty.body).toMatchObject({ document_state: null, editor_action: "clear" });
    fake.roster = roster;
    fake.documentMissing = true;
    const gone = await call(gw, "/v1/sessions/s1/history");
    expect(gone.body).toMatchObject({ document_state: null, editor_action: "clear" });
  });

  it("passes a 404 through and validates the session id", async () => {
    expect(await call(gw, "/v1/sessions/missing/history")).toMatchObject({
      status: 404,
      body: { detail: "Session not found" },
    });
    const res = await call(gw, "/v1/sessions/bad$id/history?include_document_html=maybe");
    expect(res.status).toBe(422);
    expect((res.body.detail as { loc: unknown[] }[]).map((d) => d.loc)).toEqual([
      ["path", "session_id"],
      ["query", "include_document_html"],
    ]);
  });
});

describe("GET /health", () => {
  it("names only the services that are down", async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "unhealthy", failing: ["ingest"] });
  });
});
