// What the smoke proves on the played dev overlay, through the gateway replicas at their pod
// addresses: an API key from billing's gRPC, the main job, an async chat streamed through the
// other gateway replica (and replayed with Last-Event-ID), a save in one session seen as a
// doc-event in another, and a job that survives the loss of its agent pod, charged once.
import { readFileSync } from "node:fs";
import { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { createDb, createRpcClient, type Principal } from "@redline/service-kit";
import { readSse } from "../../test/support/jobs.js";
import { podman } from "./podman.js";
import type { PlannedPod } from "./translate.js";

/** The played cluster as the checks see it. */
export interface Cluster {
  runId: string;
  /** Pods that became ready (or completed). */
  pods: PlannedPod[];
  /** Stops the liveness watchers of a pod about to be killed. */
  forget(pod: PlannedPod): Promise<void>;
  log: (line: string) => void;
  /** Rows of the slow document of the agent-loss check (large enough for the job to outlive a kill). */
  slowChunks: number;
}

/** One check: a name and a body that throws with the reason when it fails. */
export type Check = [name: string, run: () => Promise<string | undefined>];

// Parsed JSON of the API under test, read field by field.
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the API under test
type Body = Record<string, any>;

const SAMPLE = new URL("../../samples/contract.html", import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fail(message: string): never {
  throw new Error(message);
}

/** Pods behind a Service (its DNS alias) and the Service's first port. */
function behind(cluster: Cluster, service: string): { pods: PlannedPod[]; port: number } {
  const pods = cluster.pods.filter((p) => p.services.some((s) => s.name === service));
  const port = pods[0]?.services.find((s) => s.name === service)?.ports[0];
  if (!pods.length || !port) fail(`no ready pod behind Service "${service}"`);
  return { pods, port };
}

async function call(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  let json: Body = {};
  try {
    json = text ? (JSON.parse(text) as Body) : {};
  } catch {
    json = { raw: text.slice(0, 200) };
  }
  return { status: res.status, body: json };
}

const brief = (body: unknown) => JSON.stringify(body).slice(0, 300);

/** The checks in order; later ones use what earlier ones made (key, session, document). */
export function redlineChecks(cluster: Cluster): Check[] {
  const state: {
    key?: string;
    principal?: Principal;
    /** The main job's session, document, its HTML and version. */
    sid?: string;
    documentId?: string;
    html?: string;
    version?: string;
    /** The async job and the events read from its stream. */
    asyncJob?: { sid: string; jobId: string; events: { id?: string; event: string }[] };
  } = {};
  const gateways = () => {
    const { pods, port } = behind(cluster, "gateway");
    if (pods.length < 2) fail(`needs 2 gateway replicas, found ${pods.length}`);
    return pods.map((p) => `http://${p.ip}:${port}`);
  };
  const accounts = () => {
    const { pods, port } = behind(cluster, "billing");
    return createRpcClient(accountsV1.AccountsServiceService, `${pods[0].ip}:${port}`);
  };
  const need = <T>(value: T | undefined, what: string): T => value ?? fail(`blocked: no ${what} from an earlier check`);

  return [
    [
      "API key created through AccountsService CreateApiKey (billing pod address)",
      async () => {
        const client = accounts();
        try {
          const res = await client.createApiKey({ user: `smoke-${cluster.runId}`, organization: "", plan: "pro" });
          if (!/^sk_[0-9a-f]{32}$/.test(res.apiKey)) fail(`unexpected key shape ${res.apiKey.slice(0, 6)}…`);
          state.key = res.apiKey;
          state.principal = res.principal;
          return `key ${res.apiKey.slice(0, 7)}… for ${res.principal?.userId}`;
        } finally {
          client.close();
        }
      },
    ],
    [
      "main job: POST /v1/chat on samples/contract.html edits the document (gateway-0)",
      async () => {
        const [gw] = gateways();
        const res = await call(gw, "POST", "/v1/chat", need(state.key, "API key"), {
          message: 'replace "Acme Corporation" with "Globex Inc"',
          document_html: readFileSync(SAMPLE, "utf8"),
        });
        if (res.status !== 200) fail(`POST /v1/chat → ${res.status} ${brief(res.body)}`);
        const changes = res.body.document_changes;
        const html: string = changes?.updated_html ?? "";
        if (!html.includes("Globex Inc") || html.includes("Acme Corporation"))
          fail(`the edit is not in updated_html: ${brief(res.body)}`);
        if (!changes.chunk_diffs?.length) fail("no chunk_diffs");
        if (res.body.usage?.ops_charged !== 1) fail(`ops_charged ${res.body.usage?.ops_charged}, expected 1`);
        Object.assign(state, {
          sid: res.body.session_id,
          documentId: changes.document_id,
          html,
          version: changes.version_id,
        });
        return `${changes.chunk_diffs.length} chunk(s) changed, 1 op charged`;
      },
    ],
    [
      "async chat: SSE stream read through the other gateway replica ends on final",
      async () => {
        const [gw0, gw1] = gateways();
        const key = need(state.key, "API key");
        const created = await call(gw0, "POST", "/v1/chat/async", key, {
          message: 'add paragraph "Notices are given in writing." after section "4. Term and Termination"',
          document_html: readFileSync(SAMPLE, "utf8"),
        });
        if (created.status !== 202) fail(`POST /v1/chat/async → ${created.status} ${brief(created.body)}`);
        const { job_id: jobId, session_id: sid } = created.body;
        const read = await readSse({ url: gw1 }, `/v1/chat/${sid}/stream?job_id=${jobId}`, {
          headers: { Authorization: `Bearer ${key}` },
          timeoutMs: 60_000,
        });
        const names = read.events.map((e) => e.event);
        if (read.status !== 200) fail(`stream → ${read.status}`);
        if (!read.ended) fail(`the stream did not end; events: ${names.join(", ")}`);
        const final = names.lastIndexOf("final");
        if (final < 0 || names.includes("error")) fail(`no final event: ${names.join(", ")}`);
        if (names.slice(final + 1).some((n) => n !== "usage")) fail(`events after final: ${names.join(", ")}`);
        const result = read.events[final].data.result as Body | undefined;
        if (!String(result?.document_changes?.updated_html ?? "").includes("Notices are given in writing."))
          fail(`final result lacks the edit: ${brief(result)}`);
        state.asyncJob = { sid, jobId, events: read.events };
        return `${read.events.length} events (${[...new Set(names)].join(", ")})`;
      },
    ],
    [
      "SSE reconnect with Last-Event-ID replays only later events (gateway-0)",
      async () => {
        const [gw0] = gateways();
        const job = need(state.asyncJob, "async job");
        const first = job.events.find((e) => e.id !== undefined);
        if (!first?.id) fail("the first read had no event ids");
        const read = await readSse({ url: gw0 }, `/v1/chat/${job.sid}/stream?job_id=${job.jobId}`, {
          headers: { Authorization: `Bearer ${need(state.key, "API key")}`, "Last-Event-ID": first.id },
          timeoutMs: 30_000,
        });
        const ids = read.events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
        if (ids.some((id) => id <= Number(first.id))) fail(`replayed ids ${ids.join(",")} after ${first.id}`);
        if (!read.events.some((e) => e.event === "final")) fail("the replay has no final event");
        return `${read.events.length} events after id ${first.id}`;
      },
    ],
    [
      "a save in one session is a doc-event in another (save on gateway-0, poll on gateway-1)",
      async () => {
        const [gw0, gw1] = gateways();
        const key = need(state.key, "API key");
        const documentId = need(state.documentId, "document");
        const other = await call(gw1, "POST", "/v1/sessions/init", key, { document_ids: [documentId] });
        if (other.status !== 200) fail(`sessions/init → ${other.status} ${brief(other.body)}`);
        const bSid = other.body.session_id;
        const start = await call(gw1, "GET", `/v1/sessions/${bSid}/doc-events`, key);
        const cursor = start.body.last_id ?? 0;
        const saved = await call(gw0, "POST", `/v1/sessions/${state.sid}/documents/${documentId}/save`, key, {
          html: need(state.html, "document HTML").replace("Globex Inc", "Globex Incorporated"),
          base_version_id: state.version,
        });
        if (saved.status !== 200) fail(`save → ${saved.status} ${brief(saved.body)}`);
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          const polled = await call(gw1, "GET", `/v1/sessions/${bSid}/doc-events?after_id=${cursor}`, key);
          const hit = (polled.body.events ?? []).find(
            (e: Body) => e.type === "document_updated" && e.document_id === documentId && e.session_id === state.sid,
          );
          if (hit) return `event ${hit.id} (${hit.change}) for version ${hit.version_id}`;
          await sleep(250);
        }
        return fail("no document_updated event reached the other session in 20 s");
      },
    ],
    ...agentLossChecks(cluster, () => ({
      key: need(state.key, "API key"),
      principal: need(state.principal, "principal"),
    })),
  ];
}

/**
 * Two checks over one run: an async job on a document large enough to outlive a kill; once its
 * lease names a worker, that worker's agent pod is stopped with no grace; the job must complete
 * on the other agent (a second attempt) and the account be charged exactly its ops_charged.
 */
function agentLossChecks(cluster: Cluster, auth: () => { key: string; principal: Principal }): Check[] {
  const outcome: { done?: Body; row?: Body; charged?: number; error?: Error } = {};
  let ran: Promise<void> | undefined;
  const runOnce = () => {
    ran ??= agentLoss(cluster, auth(), outcome).catch((err: Error) => {
      outcome.error = err;
    });
    return ran;
  };
  return [
    [
      "agent pod stopped (-t 0) mid-job: the job completes on the other agent",
      async () => {
        await runOnce();
        if (outcome.error) throw outcome.error;
        const { done, row } = outcome as Required<typeof outcome>;
        if (done.status !== "completed") fail(`job ${done.status}: ${done.error ?? ""}`);
        if (row.attempts < 2) fail(`attempts ${row.attempts}: the job was not taken over`);
        const diffs = done.result?.document_changes?.chunk_diffs ?? [];
        if (diffs.length !== 1) fail(`expected one changed chunk, got ${diffs.length}`);
        return `completed on attempt ${row.attempts}`;
      },
    ],
    [
      "the job that lost its agent is charged once (usage before/after)",
      async () => {
        await runOnce();
        if (outcome.error) fail(`blocked: ${outcome.error.message.split("\n")[0]}`);
        const { done, charged } = outcome as Required<typeof outcome>;
        if (done.status !== "completed")
          fail(
            `blocked: the job ${done.status}; usage grew by ${charged} (a job that does not complete must not be charged)`,
          );
        const ops = done.result?.usage?.ops_charged;
        if (ops !== 1 || charged !== 1) fail(`ops_charged ${ops}, usage grew by ${charged}; expected 1 and 1`);
        return "1 op charged, monthly_used +1";
      },
    ],
  ];
}

async function agentLoss(cluster: Cluster, auth: { key: string; principal: Principal }, out: Body): Promise<void> {
  const { pods: gateways, port: gwPort } = behind(cluster, "gateway");
  const agents = behind(cluster, "agent").pods;
  if (agents.length < 2) fail(`needs 2 agent replicas, found ${agents.length}`);
  const [gw0, gw1] = gateways.map((p) => `http://${p.ip}:${gwPort}`);
  const agentEnv = agents[0].containers[0].env;
  const dbUrl = new URL(agentEnv.DATABASE_URL ?? fail("the agent has no DATABASE_URL"));
  const dbPod = cluster.pods.find((p) => p.aliases.includes(dbUrl.hostname)) ?? fail(`no pod is "${dbUrl.hostname}"`);
  dbUrl.hostname = dbPod.ip;
  const db = createDb(dbUrl.toString(), "agent", 2);
  const billingPods = behind(cluster, "billing");
  const billing = createRpcClient(billingV1.BillingServiceService, `${billingPods.pods[0].ip}:${billingPods.port}`);
  const used = async () => (await billing.getUsage({}, { principal: auth.principal })).usage?.monthlyUsed ?? NaN;
  try {
    const before = await used();
    const marker = `needle-${cluster.runId}`;
    const rows = Array.from({ length: cluster.slowChunks }, (_, i) => `<p>Schedule item ${i}: terms as agreed.</p>`);
    const created = await call(gw0, "POST", "/v1/chat/async", auth.key, {
      message: `replace "${marker}" with "found-${cluster.runId}"`,
      document_html: `<h1>Long schedule</h1>${rows.join("")}<p>Last item: ${marker}.</p>`,
      response_mode: "compact",
    });
    if (created.status !== 202) fail(`POST /v1/chat/async → ${created.status} ${brief(created.body)}`);
    const jobId = created.body.job_id;

    // The worker named in the job's lease, then its pod (each agent logs its instance id at start).
    let owner: string | undefined;
    const claimDeadline = Date.now() + 60_000;
    while (!owner && Date.now() < claimDeadline) {
      const row = await db.withSchema("agent").from("jobs").where({ id: jobId }).first();
      if (row?.status === "in_progress" && row.lease_owner) owner = String(row.lease_owner).split("/")[0];
      else if (row && row.status !== "pending" && row.status !== "in_progress")
        fail(`the job ended (${row.status}) before its agent could be stopped: raise K8S_SMOKE_SLOW_CHUNKS`);
      else await sleep(50);
    }
    if (!owner) fail("no agent claimed the job in 60 s");
    let victim: PlannedPod | undefined;
    for (const pod of agents) {
      const logs = await podman(["logs", pod.containers[0].name]);
      if (`${logs.stdout}${logs.stderr}`.includes(owner)) victim = pod;
    }
    if (!victim) fail(`no agent pod logged instance ${owner}`);
    await cluster.forget(victim);
    const stop = await podman(["stop", "-t", "0", ...victim.containers.map((c) => c.name)]);
    if (stop.code !== 0) fail(`podman stop ${victim.name} failed: ${stop.stderr}`);
    const still = await db.withSchema("agent").from("jobs").where({ id: jobId }).first();
    if (still?.status !== "in_progress")
      fail(`the job was ${still?.status} when ${victim.name} stopped: raise K8S_SMOKE_SLOW_CHUNKS`);
    cluster.log(`  stopped ${victim.name} (${owner}) while job ${jobId} ran`);

    // The other agent takes the job over when the lease expires; poll through the other gateway.
    const deadline = Date.now() + 180_000;
    let last = "";
    while (Date.now() < deadline) {
      const res = await call(gw1, "GET", `/v1/jobs/${jobId}`, auth.key).catch(
        (err: Error): { status: number; body: Body } => ({ status: 0, body: { error: err.message } }),
      );
      last = res.status === 200 ? res.body.status : `HTTP ${res.status}`;
      if (res.status === 200 && ["completed", "failed", "cancelled"].includes(res.body.status)) {
        out.done = res.body;
        break;
      }
      await sleep(500);
    }
    if (!out.done) {
      const row = await db.withSchema("agent").from("jobs").where({ id: jobId }).first();
      const lease = row?.lease_owner
        ? `lease ${row.lease_owner} until ${new Date(row.lease_expires_at).toISOString()}`
        : "no lease";
      fail(`the job did not end in 180 s after the kill (last: ${last}; attempt ${row?.attempts}, ${lease})`);
    }
    out.row = await db.withSchema("agent").from("jobs").where({ id: jobId }).first();
    out.charged = (await used()) - before;
  } finally {
    billing.close();
    await db.destroy();
  }
}
