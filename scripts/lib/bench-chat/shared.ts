// What both chat benches (`pnpm bench o p`) share: chat clients on a small stored document, one
// sync chat turn, loops of concurrent workers, and the gateway's limits opened for a bench's pace.
import { accountsV1 } from "@redline/grpc-stubs";
import { createRpcClient } from "@redline/service-kit";
import type { StackOptions, TestStack } from "../../../test/support/stack.js";

/** The small stored document every client edits, and the two words its turns swap. */
const SMALL_DOCUMENT = "<h1>Terms</h1><p>The alpha release ships soon.</p><p>Second paragraph.</p>";
const WORDS = ["alpha", "omega"] as const;

/** Clients at once in (p), and in (o)'s loaded run: the load the issue names for chat throughput. */
export const LOAD_CLIENTS = 8;

/** The offline engine, whatever the caller's environment says. */
export const OFFLINE = { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" };

/** One chat client: its key, the owner behind it, its session and the document loaded there. */
export interface ChatClient {
  key: string;
  ownerId: string;
  sessionId: string;
  documentId: string;
  /** Turns done, so the next one swaps the word the document now holds. */
  turns: number;
}

/** A sync chat turn on `client`'s stored document that changes one chunk, sending `headers`; ms taken. */
export async function chatTurn(
  call: TestStack["call"],
  client: ChatClient,
  headers?: Record<string, string>,
): Promise<number> {
  const [from, to] = client.turns % 2 === 0 ? WORDS : ([WORDS[1], WORDS[0]] as const);
  const started = performance.now();
  const res = await call("POST", "/v1/chat", {
    key: client.key,
    body: { session_id: client.sessionId, message: `replace "${from}" with "${to}"` },
    headers,
  });
  const body = (await res.json()) as { document_changes?: { changes?: unknown[] } };
  if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
  if (body.document_changes?.changes?.length !== 1) throw new Error("a bench turn changed no chunk");
  client.turns++;
  return performance.now() - started;
}

/** `count` clients, each with a pro key of its own (a user of its own) and the small document loaded in a session. */
export async function chatClients(
  stack: { call: TestStack["call"]; billingAddr: string },
  count: number,
  name: string,
): Promise<ChatClient[]> {
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.billingAddr);
  try {
    return await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const { apiKey: key } = await accounts.createApiKey({ user: `${name}-${i}`, organization: "", plan: "pro" });
        const ownerId = (await accounts.resolveApiKey({ apiKey: key })).principal?.ownerId ?? "";
        const res = await stack.call("POST", "/v1/chat", {
          key,
          body: { message: `replace "${WORDS[0]}" with "${WORDS[1]}"`, document_html: SMALL_DOCUMENT },
        });
        const body = (await res.json()) as { session_id: string; document_changes: { document_id: string } };
        if (res.status !== 200) throw new Error(`loading the bench document answered ${res.status}`);
        return { key, ownerId, sessionId: body.session_id, documentId: body.document_changes.document_id, turns: 1 };
      }),
    );
  } finally {
    accounts.close();
  }
}

/** Runs `worker` in `concurrency` loops until `stop()` says so; returns every call's ms. */
export async function inLoops(concurrency: number, stop: () => boolean, worker: (i: number) => Promise<number>) {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      while (!stop()) times.push(await worker(i));
    }),
  );
  return times;
}

/** The gateway's limits with room for a benchmark's pace; the limiter still runs on every request. */
export const UNLIMITED: StackOptions["rateLimits"] = {
  expensive: { capacity: 1_000_000, windowSeconds: 60 },
  write: { capacity: 1_000_000, windowSeconds: 60 },
  read: { capacity: 1_000_000, windowSeconds: 60 },
};

/** UNLIMITED as a process stack's gateway reads it. */
export const UNLIMITED_ENV = Object.fromEntries(
  ["EXPENSIVE", "WRITE", "READ"].flatMap((c) => [
    [`RATE_LIMIT_${c}_CAPACITY`, "1000000"],
    [`RATE_LIMIT_${c}_WINDOW_S`, "60"],
  ]),
);
