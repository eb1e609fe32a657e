// One MCP server per MCP request, bound to its caller: the tools (tools.ts) and the documents as
// resources `redline://documents/{document_id}` (their HTML), all acting through the caller's own
// HTTP API (loopback.ts).
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { DocumentDetailSchema, DocumentListResponseSchema } from "../documents/schemas.js";
import { seg } from "./loopback.js";
import { registerTools, type ToolContext } from "./tools.js";

/** The server's name and version in the MCP handshake. */
export const MCP_SERVER_INFO = { name: "redline", version: "0.1.0" } as const;

/** The URI template of a document resource. */
export const DOCUMENT_URI = "redline://documents/{document_id}";

/** Documents listed by resources/list: the most recently updated, one page of GET /v1/documents. */
const LISTED_DOCUMENTS = 200;

const INSTRUCTIONS =
  "Redline edits documents (HTML split into chunks; headings start sections). list_documents finds a " +
  "document, read_document reads it (outline first, then sections, chunks or table rows), open_document puts " +
  "it in a session, edit_document changes it with an instruction in words and returns the change records, " +
  "list_versions and restore_version manage its history, export_document gives a download link.";

/** Builds the MCP server of one caller (`tool`): every tool and the document resources. */
export function createMcpServer(tool: ToolContext): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions: INSTRUCTIONS,
  });
  registerTools(server, tool);
  const { http } = tool;
  server.registerResource(
    "document",
    new ResourceTemplate(DOCUMENT_URI, {
      list: async () => {
        const res = await http.call(DocumentListResponseSchema, "GET", "/v1/documents", {
          query: { limit: LISTED_DOCUMENTS },
        });
        return {
          resources: res.documents.map((d) => ({
            uri: `redline://documents/${d.document_id}`,
            name: d.title || d.document_id,
            mimeType: "text/html",
          })),
        };
      },
    }),
    {
      title: "Saved document",
      description: "A saved document's HTML at head (chunk ids kept).",
      mimeType: "text/html",
    },
    async (uri, variables) => {
      const id = String(variables.document_id ?? "");
      const doc = await http.call(DocumentDetailSchema, "GET", `/v1/documents/${seg(decodeURIComponent(id))}`, {
        query: { include_html: true },
      });
      return { contents: [{ uri: uri.href, mimeType: "text/html", text: doc.html ?? "" }] };
    },
  );
  return server;
}
