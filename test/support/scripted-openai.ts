// A scripted OpenAI-compatible HTTP server for tests: real sockets, real SSE, so the
// engine is exercised through the actual `openai` SDK. Each POST /v1/chat/completions
// consumes the next script step; an exhausted script answers {content: "done"}.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { OpenAiEngineConfig } from "@redline/agent";

/** One message of a recorded request, as the client sent it. */
export interface RecordedMessage {
  role: string;
  content?: string | { type: string; text?: string; image_url?: { url: string } }[] | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
}

/** The parsed JSON body of one chat completions request. */
export interface RecordedRequest {
  model: string;
  messages: RecordedMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  tool_choice?: unknown;
  stream?: boolean;
  [key: string]: unknown;
}

/** A tool call the scripted model makes; `arguments` is sent raw, so it may be malformed JSON. */
export interface ScriptedToolCall {
  name: string;
  arguments: string;
  id?: string;
}

/**
 * How an answer deviates from OpenAI's, as real servers do: `ignoreStream` answers one JSON body
 * even when `stream: true` was asked (proxies, some LM Studio and Ollama builds); `finishReason`
 * replaces the natural one (e.g. "length": cut off at the output limit, arguments as given).
 */
export interface AnswerQuirks {
  ignoreStream?: boolean;
  finishReason?: string;
}

/** What the scripted model does for one request. */
export type ScriptStep =
  /**
   * Call tools; with `splitArgs`, each call's arguments stream in that many fragments; with
   * `interleave`, the fragments of parallel calls alternate (call 0, call 1, call 0, ...), as
   * vLLM and OpenAI stream parallel tool calls; with `zeroIndex`, every call streams as `index` 0
   * and only its `id` tells it apart (some llama.cpp and Ollama builds).
   */
  | ({
      toolCalls: ScriptedToolCall[];
      splitArgs?: number;
      content?: string;
      interleave?: boolean;
      zeroIndex?: boolean;
    } & AnswerQuirks)
  /** Answer with text (streamed in `splitContent` pieces, default 1). */
  | ({ content: string; splitContent?: number } & AnswerQuirks)
  /**
   * Wait, then do `then`. Streaming: headers and a first chunk go out first (a stalled
   * stream) unless `beforeHeaders`. Build it with delayed(): an object whose `then` is a
   * function is a thenable, so an async function step must not return one directly.
   */
  | { delayMs: number; then: ScriptStep; beforeHeaders?: boolean }
  /** Fail with an HTTP status; `body` defaults to an OpenAI-style error object. */
  | { status: number; body?: string; headers?: Record<string, string> }
  /** Decide from the request (e.g. read the previous tool result to target a real chunk id). */
  | ((request: RecordedRequest) => ScriptStep | Promise<ScriptStep>);

/** A running scripted server. */
export interface ScriptedOpenAi {
  /** Base URL ending in `/v1`, for `baseURL`. */
  url: string;
  /** Parsed bodies of every chat completions request, in arrival order. */
  requests: RecordedRequest[];
  /** Headers of the same requests (e.g. to check the Authorization header). */
  requestHeaders: IncomingHttpHeaders[];
  /** When each request arrived (Date.now()), e.g. to check a back-off. */
  requestTimes: number[];
  /** Appends steps to the script. */
  push(...steps: ScriptStep[]): void;
  /** Drops the steps not played yet (so one test's leftovers never answer the next). */
  clear(): void;
  /** Closes the server and any open connections. */
  close(): Promise<void>;
}

/** A step that waits `delayMs` before doing `step` (see the ScriptStep variant). */
export function delayed(delayMs: number, step: ScriptStep, opts: { beforeHeaders?: boolean } = {}): ScriptStep {
  // biome-ignore lint/suspicious/noThenProperty: `then` is the step shape the tests and system tests share.
  return { delayMs, then: step, ...opts };
}

/** The content of the last `tool` message of a request, or "" when there is none. */
export function lastToolResult(request: RecordedRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message.role === "tool") return typeof message.content === "string" ? message.content : "";
  }
  return "";
}

/** Parses the last tool result as JSON (throws if it is not JSON). */
export function lastToolResultJson<T = Record<string, unknown>>(request: RecordedRequest): T {
  return JSON.parse(lastToolResult(request)) as T;
}

/** The server's state: the steps still to play and what the client sent. */
interface ScriptState {
  queue: ScriptStep[];
  requests: RecordedRequest[];
  requestHeaders: IncomingHttpHeaders[];
  requestTimes: number[];
  counter: number;
}

/**
 * Starts the server on 127.0.0.1 with a random port. Serves `POST /v1/chat/completions`
 * (streaming SSE or plain JSON, following the request's `stream`) and `GET /v1/models`.
 */
export async function startScriptedOpenAi(script: ScriptStep[] = []): Promise<ScriptedOpenAi> {
  const state: ScriptState = { queue: [...script], requests: [], requestHeaders: [], requestTimes: [], counter: 0 };
  const server = createServer((req, res) => {
    handle(state, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err), type: "server_error" } });
      else res.destroy();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    requestHeaders: state.requestHeaders,
    requestTimes: state.requestTimes,
    push: (...steps) => {
      state.queue.push(...steps);
    },
    clear: () => {
      state.queue.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Routes one request: the model list, or a chat completion that plays the next script step. */
async function handle(state: ScriptState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method === "GET" && path === "/v1/models") {
    sendJson(res, 200, {
      object: "list",
      data: [{ id: "scripted-model", object: "model", created: 0, owned_by: "redline-tests" }],
    });
    return;
  }
  if (req.method !== "POST" || path !== "/v1/chat/completions") {
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } });
    return;
  }
  const raw = await readBody(req);
  let body: RecordedRequest;
  try {
    body = JSON.parse(raw) as RecordedRequest;
  } catch {
    sendJson(res, 400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
    return;
  }
  state.requests.push(body);
  state.requestHeaders.push(req.headers);
  state.requestTimes.push(Date.now());
  state.counter++;
  const step: ScriptStep = state.queue.shift() ?? { content: "done" };
  await respond(res, body, step, `chatcmpl-scripted-${state.counter}`, false);
}

/** Plays one step: resolves a function step, waits out a delay, fails with a status, or answers. */
async function respond(
  res: ServerResponse,
  request: RecordedRequest,
  step: ScriptStep,
  id: string,
  headersSent: boolean,
): Promise<void> {
  if (typeof step === "function") {
    const produced = step(request);
    // Only real promises are awaited: awaiting a delay step whose `then` is a function would call it.
    const next = produced instanceof Promise ? await produced : produced;
    return respond(res, request, next, id, headersSent);
  }
  const streaming = request.stream === true;
  const model = typeof request.model === "string" ? request.model : "scripted-model";
  if ("delayMs" in step) {
    let sent = headersSent;
    if (streaming && !step.beforeHeaders && !sent) {
      startStream(res);
      writeChunk(res, id, model, { role: "assistant", content: "" }, null);
      sent = true;
    }
    // Stops waiting when the client hangs up, so an aborted request leaves no timer behind.
    const closed = await sleepUnlessClosed(res, step.delayMs);
    if (closed) return;
    return respond(res, request, step.then, id, sent);
  }
  if ("status" in step) return failWith(res, step, headersSent);
  const answer: Answer = {
    id,
    model,
    content: step.content ?? "",
    toolCalls: "toolCalls" in step ? step.toolCalls : [],
    contentPieces: "splitContent" in step ? (step.splitContent ?? 1) : 1,
    argPieces: "splitArgs" in step ? (step.splitArgs ?? 1) : 1,
    interleave: "interleave" in step && step.interleave === true,
    zeroIndex: "zeroIndex" in step && step.zeroIndex === true,
    finishReason: step.finishReason,
  };
  if (streaming && !step.ignoreStream) streamAnswer(res, answer, headersSent);
  else sendAnswer(res, answer);
}

/** An HTTP error status step; once a stream has started it is too late for one, so the connection drops. */
function failWith(
  res: ServerResponse,
  step: { status: number; body?: string; headers?: Record<string, string> },
  headersSent: boolean,
): void {
  if (headersSent) {
    res.destroy();
    return;
  }
  const body =
    step.body ??
    JSON.stringify({ error: { message: `scripted error ${step.status}`, type: "server_error", code: null } });
  res.writeHead(step.status, { "content-type": "application/json", ...step.headers });
  res.end(body);
}

/** A text and/or tool-call answer, and how many fragments its content and arguments stream in. */
interface Answer {
  id: string;
  model: string;
  content: string;
  toolCalls: ScriptedToolCall[];
  contentPieces: number;
  argPieces: number;
  interleave: boolean;
  zeroIndex: boolean;
  /** Overrides "tool_calls"/"stop". */
  finishReason?: string;
}

/** The id of each tool call: the scripted one, else `call_<request number>_<index>`. */
function callIdsOf(answer: Answer): string[] {
  return answer.toolCalls.map((call, i) => call.id ?? `call_${answer.id.split("-").pop()}_${i}`);
}

/** The answer as one JSON chat.completion. */
function sendAnswer(res: ServerResponse, answer: Answer): void {
  const { id, model, content, toolCalls } = answer;
  const callIds = callIdsOf(answer);
  sendJson(res, 200, {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: content === "" && toolCalls.length > 0 ? null : content,
          ...(toolCalls.length > 0
            ? {
                tool_calls: toolCalls.map((call, i) => ({
                  id: callIds[i],
                  type: "function",
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: finishReasonOf(answer),
      },
    ],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
}

/** The answer as SSE chunks: content pieces, then each tool call (id and name first, then argument fragments). */
function streamAnswer(res: ServerResponse, answer: Answer, headersSent: boolean): void {
  const { id, model, content, toolCalls } = answer;
  const callIds = callIdsOf(answer);
  if (!headersSent) {
    startStream(res);
    writeChunk(res, id, model, { role: "assistant", content: "" }, null);
  }
  for (const piece of split(content, answer.contentPieces)) writeChunk(res, id, model, { content: piece }, null);
  // Each call's fragments: the first carries id and name, later ones only arguments, as OpenAI streams them.
  const fragments = toolCalls.map((call, n) => {
    const index = answer.zeroIndex ? 0 : n;
    return split(call.arguments, answer.argPieces).map((piece, i) =>
      i === 0
        ? { index, id: callIds[n], type: "function", function: { name: call.name, arguments: piece } }
        : { index, function: { arguments: piece } },
    );
  });
  const order = answer.interleave ? roundRobin(fragments) : fragments.flat();
  for (const fragment of order) writeChunk(res, id, model, { tool_calls: [fragment] }, null);
  writeChunk(res, id, model, {}, finishReasonOf(answer));
  res.write("data: [DONE]\n\n");
  res.end();
}

function finishReasonOf(answer: Answer): string {
  return answer.finishReason ?? (answer.toolCalls.length > 0 ? "tool_calls" : "stop");
}

/** The items of each list alternating: a0, b0, a1, b1, ... */
function roundRobin<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i]);
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  res.flushHeaders();
}

function writeChunk(
  res: ServerResponse,
  id: string,
  model: string,
  delta: Record<string, unknown>,
  finishReason: string | null,
): void {
  const chunk = {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** Splits text into `pieces` parts of near-equal length (fewer when the text is shorter). */
function split(text: string, pieces: number): string[] {
  const n = Math.max(1, Math.min(Math.floor(pieces), text.length || 1));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(text.slice(i * size, (i + 1) * size));
  return out.filter((piece, i) => piece !== "" || i === 0);
}

function sleepUnlessClosed(res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      res.off("close", onClose);
      resolve(res.destroyed);
    }, ms);
    res.once("close", onClose);
  });
}

/** Agent engine settings that send every tier's model requests to `server` (model name `model` unless `models` names each tier). */
export function scriptedEngine(
  server: ScriptedOpenAi,
  opts: { model?: string; models?: OpenAiEngineConfig["models"]; requestTimeoutMs: number; maxSteps: number },
): OpenAiEngineConfig {
  const model = opts.model ?? "scripted";
  return {
    baseURL: server.url,
    apiKey: "test-key",
    models: opts.models ?? { core: model, turbo: model, pro: model, max: model },
    requestTimeoutMs: opts.requestTimeoutMs,
    maxSteps: opts.maxSteps,
  };
}
