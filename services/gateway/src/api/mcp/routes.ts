// The MCP endpoint (Model Context Protocol, Streamable HTTP transport): POST /v1/mcp takes JSON-RPC
// messages from an MCP client (a coding assistant, a desktop chat app) and answers them with the
// tools and resources of server.ts; GET and DELETE answer 405.
//
// Stateless on purpose: every POST gets a fresh McpServer and transport bound to that request's
// API key, and nothing outlives the response. The gateway runs as several replicas behind a
// balancer; a session kept in one replica's memory would break as soon as the next POST of the
// same client reached another one (or the replica restarted), and the Mcp-Session-Id would be a
// second credential to guard. Everything a client needs between calls is Redline's own state (the
// session_id, document and job ids the tools return). Without sessions there is no server-to-client
// stream to offer, so GET (the standalone SSE stream) and DELETE (session end) are 405, as the
// transport specification allows; answers come as JSON, not as an SSE stream.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { InputError, RedlineError } from "@redline/service-kit";
import type { Response } from "express";
import { defineRoute, type ErrorResponseSpec, type Route, type RouteCall } from "../../route-registry.js";
import { endpoint } from "../shared/routes.js";
import { ErrorSchema } from "../shared/schemas.js";
import { loopbackHttp, ownListener } from "./loopback.js";
import { McpBodySchema, McpResponseSchema } from "./schemas.js";
import { createMcpServer } from "./server.js";

const NOT_ACCEPTABLE: ErrorResponseSpec = {
  status: 406,
  description: "Accept does not list both application/json and text/event-stream (MCP Streamable HTTP).",
  schema: ErrorSchema,
};
const NOT_ALLOWED: ErrorResponseSpec = {
  status: 405,
  description: "Stateless MCP: no standalone event stream (GET) and no session to end (DELETE). Allow: POST.",
  schema: ErrorSchema,
};

/** 405 `{detail}` with `Allow: POST`. */
function methodNotAllowed(method: string): RedlineError {
  return new RedlineError(
    405,
    GrpcStatus.UNIMPLEMENTED,
    `${method} /v1/mcp is not offered: this MCP server is stateless (no session, no standalone event stream); send JSON-RPC messages with POST`,
    { headers: { Allow: "POST" } },
  );
}

/**
 * Answers one MCP POST: a per-request McpServer over a stateless transport (JSON answers), its
 * tools calling the HTTP API with this request's Authorization header on this request's own
 * listener. 406 `{detail}` when Accept lacks application/json or text/event-stream, as the
 * transport requires of clients, and 400 `{detail}` for an MCP-Protocol-Version the SDK does not
 * speak: answered here, before the transport, so every refusal has the spec's shape.
 */
async function serveMcp(res: Response, body: unknown, call: RouteCall): Promise<void> {
  const req = res.req;
  const accept = req.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    throw new RedlineError(
      406,
      GrpcStatus.INVALID_ARGUMENT,
      "Not Acceptable: an MCP client must send Accept: application/json, text/event-stream",
    );
  }
  const version = req.get("mcp-protocol-version");
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new InputError(
      `Unsupported MCP-Protocol-Version '${version.slice(0, 40)}': supported are ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
    );
  }
  const gone = new AbortController();
  const http = loopbackHttp({
    baseUrl: ownListener(req),
    authorization: req.get("authorization") ?? "",
    requestId: call.requestId,
    signal: gone.signal,
  });
  const server = createMcpServer({ http, call, signal: gone.signal });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    gone.abort();
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** POST /v1/mcp: JSON-RPC messages of the MCP Streamable HTTP transport. */
export const mcpPostRoute = defineRoute({
  ...endpoint("POST /v1/mcp", "mcp", "MCP server (Streamable HTTP)", "mcp", { limiter: "read" }),
  description:
    "The Model Context Protocol endpoint for AI agents: tools list_documents, open_document, read_document, " +
    "edit_document, approve_changes, save_document, list_versions, restore_version, export_document, and " +
    "documents as resources redline://documents/{document_id}. Stateless (no Mcp-Session-Id); answers are JSON. " +
    "Each tool call is a call of this API with the same key, so its own rate limit class, quota and bounds apply.",
  request: { body: McpBodySchema },
  response: { description: "JSON-RPC response(s), or 202 for notifications only.", schema: McpResponseSchema },
  errors: [400, NOT_ACCEPTABLE],
  async handle({ body }, call) {
    return { body: {}, send: (res) => serveMcp(res, body, call) };
  },
});

/** GET /v1/mcp: 405 (no standalone event stream without sessions). */
export const mcpGetRoute = defineRoute({
  ...endpoint("GET /v1/mcp", "mcpStream", "MCP event stream (not offered)", "mcp"),
  response: { description: "Never: always 405.", schema: ErrorSchema },
  errors: [NOT_ALLOWED],
  async handle() {
    throw methodNotAllowed("GET");
  },
});

/** DELETE /v1/mcp: 405 (no session to end). */
export const mcpDeleteRoute = defineRoute({
  ...endpoint("DELETE /v1/mcp", "mcpEndSession", "End an MCP session (not offered)", "mcp"),
  response: { description: "Never: always 405.", schema: ErrorSchema },
  errors: [NOT_ALLOWED],
  async handle() {
    throw methodNotAllowed("DELETE");
  },
});

/** The MCP routes (api/index.ts mounts every area's list). */
export const mcpRoutes: Route[] = [mcpPostRoute, mcpGetRoute, mcpDeleteRoute];
