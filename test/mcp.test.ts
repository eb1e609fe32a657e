// The MCP server at /v1/mcp (issue #35, part 1), driven by the SDK's own Client over the Streamable
// HTTP transport against the real stack: the tools are listed, a document with a table is opened
// and read (outline, a section, a table's rows), edited with the offline engine's literal
// instruction (the change records come back), proposed and approved, exported (the download URL
// is fetched and its bytes checked), restored to an older version; documents are resources; a bad
// input is an isError result naming the field; no key is the spec's 401, GET and DELETE are 405.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, createSavedDocument } from "./support/documents-client.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let client: Client;

/** A contract with a heading-anchored pricing section holding a 4-row table. */
const DOC = [
  "<h1>Services Agreement</h1>",
  "<p>Acme shall pay every invoice within 30 days.</p>",
  "<h2>Pricing</h2>",
  "<p>Prices per month:</p>",
  "<table><thead><tr><th>Plan</th><th>Price</th></tr></thead>",
  "<tbody><tr><td>Free</td><td>$0</td></tr><tr><td>Team</td><td>$10</td></tr><tr><td>Business</td><td>$30</td></tr></tbody></table>",
  "<h2>Term</h2>",
  "<p>This agreement runs for one year.</p>",
].join("\n");

/** An MCP client of the gateway with `apiKey`. */
async function connect(apiKey: string): Promise<Client> {
  const c = new Client({ name: "redline-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  await c.connect(transport);
  return c;
}

/** Calls a tool that must succeed; its structured result. */
async function tool(name: string, args: Record<string, unknown>): Promise<Body> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = res.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  expect(res.isError, `${name}: ${text}`).toBeFalsy();
  expect(JSON.parse(text)).toEqual(res.structuredContent);
  return res.structuredContent as Body;
}

/** Calls a tool that must fail; its error text. */
async function toolError(name: string, args: Record<string, unknown>): Promise<string> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, name).toBe(true);
  return res.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "mcp" });
  key = await stack.createKey("mona");
  client = await connect(key);
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

describe("MCP server at /v1/mcp", () => {
  it("lists the document tools with their input schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "approve_changes",
        "edit_document",
        "export_document",
        "list_documents",
        "list_versions",
        "open_document",
        "read_document",
        "restore_version",
        "save_document",
      ].sort(),
    );
    const list = tools.find((t) => t.name === "list_documents");
    // The bounds of GET /v1/documents, carried into the tool's JSON Schema.
    expect(list?.inputSchema.properties?.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 200 });
    expect(tools.find((t) => t.name === "read_document")?.annotations?.readOnlyHint).toBe(true);
  });

  it("opens a document into a new session and reads its outline, a section and a table's rows", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const listed = await tool("list_documents", {});
    expect(listed.documents.map((d: Body) => d.document_id)).toContain(saved.documentId);

    const opened = await tool("open_document", { document_id: saved.documentId });
    expect(opened.session_id).toEqual(expect.any(String));
    expect(opened.session_id).not.toBe(saved.sessionId);
    expect(opened.documents[0]).toMatchObject({ durable_document_id: saved.documentId, focused: true });

    const outline = await tool("read_document", { document_id: saved.documentId, mode: "outline" });
    expect(outline.chunk_count).toBe(7);
    expect(outline.outline.map((e: Body) => e.tag)).toEqual(["h1", "p", "h2", "p", "table", "h2", "p"]);
    const pricing = outline.outline.find((e: Body) => e.preview === "Pricing");
    expect(pricing).toMatchObject({ tag: "h2", level: 2 });

    const headings = await tool("read_document", {
      document_id: saved.documentId,
      mode: "outline",
      headings_only: true,
    });
    expect(headings.outline.map((e: Body) => [e.preview, e.section_chunks])).toEqual([
      ["Services Agreement", 7],
      ["Pricing", 3],
      ["Term", 2],
    ]);

    const section = await tool("read_document", {
      document_id: saved.documentId,
      mode: "section",
      chunk_id: pricing.chunk_id,
    });
    expect(section.chunks).toHaveLength(3);
    expect(section.chunks[2].html).toContain("<table");

    const rows = await tool("read_document", {
      document_id: saved.documentId,
      mode: "table_rows",
      table: 1,
      row_offset: 1,
      row_limit: 2,
    });
    expect(rows.row_count).toBe(4);
    expect(rows.table_chunk_id).toBe(section.chunks[2].chunk_id);
    expect(rows.rows).toHaveLength(2);
    expect(rows.rows[0]).toMatch(/^<tr[^>]*><td[^>]*>Free<\/td><td[^>]*>\$0<\/td><\/tr>$/);
    expect(rows.rows[1]).toContain("Team");

    const byId = await tool("read_document", {
      document_id: saved.documentId,
      mode: "chunks",
      chunk_ids: [section.chunks[0].chunk_id, "nope"],
    });
    expect(byId.chunks.map((c: Body) => c.chunk_id)).toEqual([section.chunks[0].chunk_id]);
    expect(byId.unknown_chunk_ids).toEqual(["nope"]);
  });

  it("edits with an instruction, exports the result as a download, and restores the first version", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const { session_id: sessionId } = await tool("open_document", { document_id: saved.documentId });

    const edit = await tool("edit_document", {
      session_id: sessionId,
      instruction: 'replace "Acme" with "Globex"',
    });
    expect(edit.session_id).toBe(sessionId);
    expect(edit.document_id).toBe(saved.documentId);
    expect(edit.changes).toHaveLength(1);
    expect(edit.changes[0]).toMatchObject({ operation: "edit", document_id: saved.documentId });
    expect(edit.changes[0].old_html).toContain("Acme shall pay");
    expect(edit.changes[0].new_html).toContain("Globex shall pay");
    expect(edit.ops_charged).toBe(1);

    const exported = await tool("export_document", { session_id: sessionId, format: "txt", filename: "contract" });
    expect(exported).toMatchObject({ format: "txt", filename: "contract.txt", expires_in_seconds: 900 });
    const file = await fetch(exported.download_url);
    expect(file.status).toBe(200);
    const text = Buffer.from(await file.arrayBuffer()).toString("utf8");
    expect(text).toContain("Globex shall pay every invoice within 30 days.");
    expect(text).toContain("Business");

    // Without a session: one is opened for the export; a docx is a zip package.
    const docx = await tool("export_document", { document_id: saved.documentId, format: "docx" });
    const bytes = new Uint8Array(await (await fetch(docx.download_url)).arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 2)).toString("latin1")).toBe("PK");

    const versions = await tool("list_versions", { document_id: saved.documentId });
    expect(versions.total).toBe(2);
    const first = versions.versions.at(-1);
    expect(first.kind).toBe("create");
    expect(versions.versions[0].version_id).toBe(edit.version_id);

    const restored = await tool("restore_version", { document_id: saved.documentId, version_id: first.version_id });
    expect(restored).toMatchObject({ restored: true, restored_from: first.version_id, kind: "restore" });
    const after = await tool("read_document", { document_id: saved.documentId, mode: "outline" });
    expect(after.version_id).toBe(restored.version_id);
    expect(after.outline[1].preview).toBe("Acme shall pay every invoice within 30 days.");
  });

  it("proposes changes with ask_every_time and applies them with approve_changes", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const proposed = await tool("edit_document", {
      document_id: saved.documentId,
      instruction: 'replace "one year" with "two years"',
      approval_mode: "ask_every_time",
    });
    expect(proposed.status).toBe("awaiting_approval");
    expect(proposed.pending_changes).toHaveLength(1);
    expect(proposed.pending_changes[0].new_html).toContain("two years");

    const decided = await tool("approve_changes", {
      session_id: proposed.session_id,
      job_id: proposed.job_id,
      approved: true,
    });
    expect(decided.applied).toEqual([proposed.pending_changes[0].change_id]);
    expect(decided.version_id).toEqual(expect.any(String));
    const term = await tool("read_document", { document_id: saved.documentId, mode: "outline" });
    expect(term.outline.at(-1).preview).toBe("This agreement runs for two years.");
  });

  it("serves documents as resources redline://documents/{id}", async () => {
    const saved = await createSavedDocument(stack, key, DOC);
    const uri = `redline://documents/${saved.documentId}`;
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "text/html" });
    const contents = read.contents[0];
    expect("text" in contents && contents.text).toContain("Business");
  });

  it("answers a bad input with an isError result naming the field", async () => {
    expect(await toolError("list_documents", { limit: 500 })).toMatch(/limit/);
    expect(await toolError("edit_document", { instruction: "   ", session_id: "s1" })).toMatch(/instruction/);
    expect(await toolError("open_document", { document_id: "x", session_id: "bad id!" })).toMatch(/session_id/);
    expect(await toolError("edit_document", { instruction: "hi" })).toMatch(/document_id/);
    const saved = await createSavedDocument(stack, key, DOC);
    // Past the schema: the service names the field (here the tool's own name for it).
    expect(
      await toolError("read_document", { document_id: saved.documentId, mode: "section", chunk_id: "zz" }),
    ).toMatch(/chunk_id/);
    expect(await toolError("read_document", { document_id: saved.documentId, mode: "table_rows", table: 2 })).toMatch(
      /table: .*1 table/,
    );
    // Another owner's document is the API's 404, as a tool error.
    const other = await connect(await stack.createKey("otto"));
    const res = (await other.callTool({
      name: "list_versions",
      arguments: { document_id: saved.documentId },
    })) as CallToolResult;
    await other.close();
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res.content)).toMatch(/HTTP 404/);
  });

  it("refuses a request without a key with the spec's 401, and GET and DELETE with 405", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const res = await fetch(`${stack.url}/v1/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(typeof ((await res.json()) as Body).detail).toBe("string");

    const keyless = new Client({ name: "redline-test", version: "1.0.0" });
    await expect(keyless.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`)))).rejects.toThrow();

    for (const method of ["GET", "DELETE"]) {
      const r = await stack.call(method, "/v1/mcp", { key, headers: { Accept: "text/event-stream" } });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
      expect(((await r.json()) as Body).detail).toMatch(/stateless/);
    }
    // Not an MCP client's Accept, and not a JSON-RPC message: the gateway's own error shapes.
    const noAccept = await stack.call("POST", "/v1/mcp", { key, body: init });
    expect(noAccept.status).toBe(406);
    expect(((await noAccept.json()) as Body).detail).toMatch(/Accept/);
    const junk = await stack.call("POST", "/v1/mcp", {
      key,
      body: { jsonrpc: "2.0", id: 1 },
      headers: { Accept: "application/json, text/event-stream" },
    });
    expect(junk.status).toBe(422);
    expect(Array.isArray(((await junk.json()) as Body).detail)).toBe(true);
    const mcpHeaders = { Accept: "application/json, text/event-stream" };
    const badVersion = await stack.call("POST", "/v1/mcp", {
      key,
      body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
      headers: { ...mcpHeaders, "MCP-Protocol-Version": "1999-01-01" },
    });
    expect(badVersion.status).toBe(400);
    expect(((await badVersion.json()) as Body).detail).toMatch(/MCP-Protocol-Version/);
    // Notifications alone: 202 with no body, as the transport specifies.
    const note = await stack.call("POST", "/v1/mcp", {
      key,
      body: { jsonrpc: "2.0", method: "notifications/initialized" },
      headers: mcpHeaders,
    });
    expect(note.status).toBe(202);
    expect(await note.text()).toBe("");
  });
});
