// One model request, as real OpenAI-compatible servers answer it. The request is streamed when the
// server streams, sent with native tools when it has them, and retried as the provider asks; what
// a server turned out not to support is remembered per base URL and model for the process
// lifetime, so only the first turn pays for finding out.
import { UnavailableError } from "@redline/service-kit";
import { APIError, type OpenAI } from "openai";
import { Stream } from "openai/streaming";
import type { OpenAiEngineConfig } from "./openai-config.js";
import { isContextLengthError } from "./openai-context.js";
import {
  parseStructuredAnswer,
  type ResponseFormatMode,
  structuredRequest,
  weakerFormat,
} from "./openai-structured.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;

/** A model's answer: text, tool calls (arguments as sent) and why it stopped (`length`: cut off). */
export interface ModelAnswer {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
}

/** One request of the loop. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  /** The turn's signal (its wall-clock cap included): waits and streams stop when it fires. */
  signal: AbortSignal;
}

/** The provider said the prompt does not fit its context window; the loop shrinks and asks again. */
export class ContextLengthError extends Error {}

/** What one server and model were found to support. */
export interface ServerCapabilities {
  /** `native`: OpenAI `tools`; `structured`: the JSON fallback (openai-structured.ts). */
  toolMode: "native" | "structured";
  /** How the structured fallback asks for JSON. */
  responseFormat: ResponseFormatMode;
  /** False once the server rejected `stream: true` or answered it with one JSON body. */
  stream: boolean;
}

const LEARNT = new Map<string, ServerCapabilities>();

/** The capabilities known for `baseURL` and `model` (a live object: the request updates it). */
export function capabilitiesOf(
  cfg: Pick<OpenAiEngineConfig, "baseURL" | "toolMode">,
  model: string,
): ServerCapabilities {
  const key = `${cfg.baseURL} ${model}`;
  let caps = LEARNT.get(key);
  if (!caps) {
    caps = {
      toolMode: cfg.toolMode === "structured" ? "structured" : "native",
      responseFormat: "json_schema",
      stream: true,
    };
    LEARNT.set(key, caps);
  }
  return caps;
}

/** Rate-limit waits one request may make before it fails. */
const RATE_LIMIT_RETRIES = 5;
/** Default cap on one Retry-After wait. */
export const RETRY_AFTER_MAX_MS_DEFAULT = 60_000;

/**
 * Sends one chat completion and gathers its text, tool calls and finish reason, adapting to the
 * server: a 400 naming `stream` turns streaming off, one naming tools switches to the structured
 * fallback (json_schema → json_object → plain instructions as each is rejected), a JSON body
 * answering a streamed request is read as one. 429 and 503 wait as the provider's Retry-After
 * says (seconds or an HTTP date; at most `retryAfterMaxMs` each, RATE_LIMIT_RETRIES times), on the
 * turn's signal, so the waits count toward the turn's wall-clock cap. Rejects with the signal's
 * reason when it fires, ContextLengthError when the prompt is too long for the model, and
 * UnavailableError for everything else the provider does wrong (after `maxRetries` retries of
 * connection errors, 408, 409 and 5xx), or when no complete answer comes within `requestTimeoutMs`.
 */
export async function requestAnswer(client: OpenAI, cfg: OpenAiEngineConfig, req: ModelRequest): Promise<ModelAnswer> {
  const caps = capabilitiesOf(cfg, req.model);
  const known = new Set(req.tools.map((tool) => tool.function.name));
  const retryAfterMax = cfg.retryAfterMaxMs ?? RETRY_AFTER_MAX_MS_DEFAULT;
  let transient = 0;
  let rateLimited = 0;
  let waitedMs = 0;
  for (;;) {
    const structured = caps.toolMode === "structured";
    const body = structured
      ? { model: req.model, ...structuredRequest(req.messages, req.tools, caps.responseFormat) }
      : { model: req.model, messages: req.messages, tools: req.tools, tool_choice: "auto" as const };
    try {
      const answer = await sendOnce(client, cfg, { ...body, stream: caps.stream }, caps, req.signal);
      if (!structured) return answer;
      return { ...parseStructuredAnswer(answer.content, known), finishReason: answer.finishReason };
    } catch (err) {
      if (req.signal.aborted) throw req.signal.reason;
      if (err instanceof UnavailableError) throw err;
      const status = err instanceof APIError ? err.status : undefined;
      const message = err instanceof Error ? err.message : String(err);
      if (status === undefined) {
        // Connection refused or reset, or the SDK's own header timeout.
        if (transient++ < (cfg.maxRetries ?? 1)) {
          await sleep(backoffMs(transient), req.signal);
          continue;
        }
        throw new UnavailableError(`model provider unavailable: ${message}`);
      }
      const code = err instanceof APIError && typeof err.code === "string" ? err.code : undefined;
      if (status === 400 || status === 413 || status === 422 || status === 500 || status === 501) {
        if (isContextLengthError(message, code)) throw new ContextLengthError(message);
        if (adapt(caps, message, structured, cfg.toolMode !== "native")) continue;
      }
      const asked = err instanceof APIError ? retryAfterMs(err.headers) : undefined;
      if (status === 429 || (status === 503 && asked !== undefined)) {
        const wait = asked ?? backoffMs(rateLimited + 1);
        if (wait > retryAfterMax) {
          throw new UnavailableError(
            `model provider rate limited (${status}): it asked to retry after ${seconds(wait)} s, longer than the ${seconds(retryAfterMax)} s this agent waits (OPENAI_RETRY_AFTER_MAX_S)`,
          );
        }
        if (rateLimited++ < RATE_LIMIT_RETRIES) {
          await sleep(wait, req.signal);
          waitedMs += wait;
          continue;
        }
        throw new UnavailableError(
          `model provider rate limited (${status}): still refusing after ${RATE_LIMIT_RETRIES} retries over ${seconds(waitedMs)} s: ${message}`,
        );
      }
      if ((status === 408 || status === 409 || status >= 500) && transient++ < (cfg.maxRetries ?? 1)) {
        await sleep(asked ?? backoffMs(transient), req.signal);
        continue;
      }
      throw new UnavailableError(`model provider unavailable: ${message}`);
    }
  }
}

/**
 * Learns from a 400-style error what the server does not support: `stream` (llama.cpp builds and
 * proxies that cannot stream tool calls), tools (see openai-structured.ts), or the fallback's
 * response_format (`mayFallBack` false: OPENAI_TOOL_MODE=native keeps tools). True when something
 * was switched off and the request should be sent again.
 */
function adapt(caps: ServerCapabilities, message: string, structured: boolean, mayFallBack: boolean): boolean {
  if (caps.stream && /\bstream/i.test(message)) {
    caps.stream = false;
    return true;
  }
  if (!structured && mayFallBack && /\btools?\b|tool_choice|tool[ _-]call|function[ _-]?call|--jinja/i.test(message)) {
    caps.toolMode = "structured";
    return true;
  }
  if (structured && /response_format|json_schema|json_object|structured output|grammar/i.test(message)) {
    const weaker = weakerFormat(caps.responseFormat);
    if (weaker === null) return false;
    caps.responseFormat = weaker;
    return true;
  }
  return false;
}

/**
 * The wait a provider asked for, in ms: `retry-after-ms` (OpenAI, Azure), else `retry-after` as
 * seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function backoffMs(attempt: number): number {
  return Math.min(8_000, 500 * 2 ** (attempt - 1));
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** Resolves after `ms`, or rejects with the signal's reason when it fires first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * One HTTP request, bounded by `requestTimeoutMs` from send to the end of its stream (the SDK's
 * own timeout stops at the response headers, which a stalled stream has already sent). Reads the
 * body by its content type, not by what was asked: servers that ignore `stream: true` (some
 * proxies, LM Studio and Ollama builds with tools) answer one JSON chat.completion.
 */
async function sendOnce(
  client: OpenAI,
  cfg: OpenAiEngineConfig,
  body: OpenAI.Chat.Completions.ChatCompletionCreateParams,
  caps: ServerCapabilities,
  signal: AbortSignal,
): Promise<ModelAnswer> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, cfg.requestTimeoutMs);
  try {
    const response = await client.chat.completions
      .create(body, { signal: controller.signal, maxRetries: 0 })
      .asResponse();
    let answer: ModelAnswer;
    if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      answer = await gatherStream(Stream.fromSSEResponse<ChatChunk>(response, controller));
    } else {
      if (body.stream) caps.stream = false;
      answer = fromCompletion((await response.json()) as ChatCompletion);
    }
    // The SDK's stream iterator ends quietly when aborted instead of throwing, so a cut
    // stream would otherwise pass for a complete (empty) answer.
    if (controller.signal.aborted) throw controller.signal.reason;
    return answer;
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (timedOut) {
      throw new UnavailableError(`model provider unavailable: no complete response within ${cfg.requestTimeoutMs} ms`);
    }
    throw err;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/** A non-streamed answer. */
function fromCompletion(completion: ChatCompletion): ModelAnswer {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const toolCalls = (message?.tool_calls ?? []).flatMap((call) =>
    call.type === "function"
      ? [{ id: call.id ?? "", name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" }]
      : [],
  );
  return { content: message?.content ?? "", toolCalls, finishReason: choice?.finish_reason ?? null };
}

/**
 * Gathers a streamed answer. Tool-call arguments arrive as fragments keyed by `index`; several
 * calls in one message (parallel tool calls) may interleave their fragments, so each index has
 * its own slot. Servers that number every call index 0 (some llama.cpp and Ollama builds) are
 * told apart by a new `id`, and servers that send no index continue the last call.
 */
async function gatherStream(stream: AsyncIterable<ChatChunk>): Promise<ModelAnswer> {
  let content = "";
  let finishReason: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  const slotOfIndex = new Map<number, number>();
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) continue;
    if (typeof delta.content === "string") content += delta.content;
    for (const fragment of delta.tool_calls ?? []) {
      let slot: number;
      if (typeof fragment.index === "number") {
        const known = slotOfIndex.get(fragment.index);
        const reused = known !== undefined && fragment.id && calls[known].id && fragment.id !== calls[known].id;
        slot = known === undefined || reused ? calls.length : known;
        slotOfIndex.set(fragment.index, slot);
      } else {
        const last = calls[calls.length - 1];
        slot = last === undefined || (fragment.id && fragment.id !== last.id) ? calls.length : calls.length - 1;
      }
      calls[slot] ??= { id: "", name: "", arguments: "" };
      const call = calls[slot];
      if (fragment.id) call.id = fragment.id;
      const name = fragment.function?.name;
      // OpenAI sends the name once; some compatible servers repeat it on every fragment.
      if (name) call.name = call.name === "" || call.name === name ? name : call.name + name;
      if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    }
  }
  return { content, toolCalls: calls.filter((call) => call !== undefined), finishReason };
}
