// POST /v1/chat (interface-spec endpoint 1): validates the chat request, runs the turn on the
// agent with the caller's principal, and maps the result to `{response, session_id,
// document_changes?, usage}` with X-Usage-* headers.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { AiTimeoutError, InputError, RedlineError, RemoteError } from "@redline/service-kit";
import { CHAT_DEADLINE_GRACE_MS } from "../config.js";
import { chatResponseToJson, toChatRpcRequest, usageHeaders } from "../mappers.js";
import { defineRoute } from "../route-registry.js";
import { ChatRequestSchema, ChatResponseSchema } from "../schemas.js";

/** The synchronous chat route. Errors: 400 empty message, 429 quota, 504 past the AI cap, agent errors as sent. */
export const chatRoute = defineRoute({
  method: "post",
  path: "/v1/chat",
  operationId: "chat",
  summary: "Synchronous AI edit",
  description:
    "Runs one chat turn. The document is loaded or replaced only when document_html or upload_document_base64 is sent. " +
    "One billable operation per document-modifying turn (one more per 25 sections changed).",
  tags: ["chat"],
  auth: true,
  body: ChatRequestSchema,
  response: {
    description: "The AI's reply, the document changes and the usage after the turn.",
    schema: ChatResponseSchema,
    headers: {
      "X-Usage-Limit": "Monthly operations quota.",
      "X-Usage-Used": "Operations used this period.",
      "X-Usage-Remaining": "Operations left this period.",
    },
  },
  errors: [400, 404, 415, 429, 503, 504],
  async handle({ body }, call) {
    if (body.message.trim() === "") throw new InputError("message must not be empty");
    const { aiTimeoutMs } = call.ctx.cfg;
    let res: Awaited<ReturnType<typeof call.ctx.agent.chat>>;
    try {
      res = await call.ctx.agent.chat(toChatRpcRequest(body), call.rpc(aiTimeoutMs + CHAT_DEADLINE_GRACE_MS));
    } catch (err) {
      // Our own deadline passed (the agent did not answer its 504 in time): Errors rule 3.
      if (
        err instanceof RedlineError &&
        !(err instanceof RemoteError) &&
        err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED
      ) {
        throw new AiTimeoutError(`AI processing exceeded the ${Math.round(aiTimeoutMs / 60_000)}-minute limit`);
      }
      throw err;
    }
    const json = chatResponseToJson(res, body.response_mode, call.principal?.plan ?? "");
    return { body: json, headers: usageHeaders(json.usage) };
  },
});
