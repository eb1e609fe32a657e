// POST /v1/chat end to end with the offline engine: real gateway, gRPC services, Postgres,
// NATS and S3. Documents are our sample contract and real files from the corpus.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { chunkMap, corpusFile, sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

interface ChangeRecord {
  change_id: string;
  operation: string;
  chunk_id: string;
  document_id: string;
  old_html: string;
  new_html: string;
  ai_explanation: string;
}
interface ChatBody {
  response: string;
  session_id: string;
  document_changes?: {
    updated_html?: string;
    version_id: string;
    changes_summary: string;
    changes?: ChangeRecord[];
    chunk_diffs: ChangeRecord[];
    document_id: string;
  };
  usage: {
    monthly_used: number;
    monthly_limit: number;
    monthly_remaining: number;
    was_billable: boolean;
    ops_charged: number;
    subscription_tier: string;
  };
}

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "chat" }, "alice"));
});
afterAll(() => stack?.close());

async function chat(body: Record<string, unknown>, k = key): Promise<{ status: number; body: ChatBody }> {
  const res = await stack.call("POST", "/v1/chat", { key: k, body });
  return { status: res.status, body: (await res.json()) as ChatBody };
}

describe("chat on the sample contract", () => {
  it("loads the document, edits one chunk and leaves every other chunk byte-identical", async () => {
    const first = await chat({
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(first.status).toBe(200);
    const changes = first.body.document_changes;
    expect(changes).toBeDefined();
    expect(first.body.session_id).toMatch(/^[a-zA-Z0-9_\-.]+$/);
    expect(changes?.chunk_diffs).toHaveLength(1);
    const [diff] = changes?.chunk_diffs ?? [];
    expect(diff.operation).toBe("edit");
    expect(diff.old_html).toContain("Acme Corporation");
    expect(diff.new_html).toContain("Globex Inc");
    expect(diff.new_html).toContain("<strong>");
    // full (the default): the HTML after the turn and the records as `changes` too
    expect(changes?.updated_html).toContain("Globex Inc");
    expect(changes?.changes).toEqual(changes?.chunk_diffs);
    expect(first.body.usage.was_billable).toBe(true);
    expect(first.body.usage.ops_charged).toBe(1);
    expect(first.body.usage.subscription_tier).toBe("free");

    // A follow-up turn without document_html edits the stored document.
    const before = chunkMap(changes?.updated_html ?? "");
    const second = await chat({ session_id: first.body.session_id, message: 'make "thirty (30) days" italic' });
    expect(second.status).toBe(200);
    const after = chunkMap(second.body.document_changes?.updated_html ?? "");
    const touched = new Set(second.body.document_changes?.chunk_diffs.map((d) => d.chunk_id));
    expect(touched.size).toBe(1);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [id, html] of before) if (!touched.has(id)) expect(after.get(id)).toBe(html);
    // The table keeps its inline styles and header row.
    const table = [...after.values()].find((h) => h.startsWith("<table"));
    expect(table).toContain('style="background-color: #1f3864; color: #ffffff;"');
    expect(table).toContain("<th");
    expect(second.body.usage.monthly_used).toBe(2);
  });

  it("adds a table row, renames a heading and records the history", async () => {
    const load = await chat({
      message: 'add row "Support retainer | 31 December 2027 | 12,000" to table 1',
      document_html: sampleContract(),
    });
    expect(load.status).toBe(200);
    const table = [...chunkMap(load.body.document_changes?.updated_html ?? "").values()].find((h) =>
      h.startsWith("<table"),
    );
    expect(table?.match(/<tr/g)).toHaveLength(4);
    expect(table).toContain("Support retainer");
    const sid = load.body.session_id;
    const rename = await chat({
      session_id: sid,
      message: 'rename heading "3. Confidentiality" to "3. Confidential Information"',
      response_mode: "compact",
    });
    expect(rename.status).toBe(200);
    // compact: only chunk_diffs, neither the full HTML nor the same records again as `changes`
    expect(rename.body.document_changes).not.toHaveProperty("updated_html");
    expect(rename.body.document_changes).not.toHaveProperty("changes");
    expect(rename.body.document_changes?.chunk_diffs[0].new_html).toContain("3. Confidential Information");

    const history = await stack.call("GET", `/v1/sessions/${sid}/history`, { key });
    expect(history.status).toBe(200);
    const h = (await history.json()) as {
      messages: { sender: string; turn_index: number; content: string }[];
      document_state: { html_content: string; version_id: string } | null;
    };
    expect(h.messages.map((m) => [m.sender, m.turn_index])).toEqual([
      ["user", 0],
      ["ai", 0],
      ["user", 1],
      ["ai", 1],
    ]);
    expect(h.document_state?.version_id).toBe(rename.body.document_changes?.version_id);
    expect(h.document_state?.html_content).toContain("3. Confidential Information");
    expect(h.document_state?.html_content).toContain("data-chunk-id=");

    const bare = await stack.call("GET", `/v1/sessions/${sid}/history?include_document_html=false`, { key });
    const bareBody = (await bare.json()) as { document_state: Record<string, unknown> | null; editor_action: string };
    expect(bareBody.document_state).not.toHaveProperty("html_content");
    expect(bareBody.document_state?.version_id).toBe(rename.body.document_changes?.version_id);
    expect(bareBody.editor_action).toBe("update");

    const list = await stack.call("GET", "/v1/sessions", { key });
    const sessions = (await list.json()) as { sessions: { session_id: string; message_count: number }[] };
    expect(sessions.sessions[0]).toMatchObject({ session_id: sid, message_count: 4 });
  });

  it("does not bill a turn that changes nothing, and shows a section in the reply", async () => {
    const load = await chat({
      message: 'show section "5. Governing Law"',
      document_html: sampleContract(),
      response_mode: "compact",
    });
    expect(load.status).toBe(200);
    expect(load.body.response).toContain("State of New York");
    expect(load.body.usage.was_billable).toBe(false);
    expect(load.body.usage.ops_charged).toBe(0);
    const unknown = await chat({ session_id: load.body.session_id, message: "please write me a poem" });
    expect(unknown.status).toBe(200);
    expect(unknown.body.document_changes).toBeUndefined();
    expect(unknown.body.usage.was_billable).toBe(false);
    expect(unknown.body.response.toLowerCase()).toContain("replace");
  });

  it("drafts an outline into an empty session", async () => {
    const res = await chat({ message: 'draft an outline for "Data Retention Policy"' });
    expect(res.status).toBe(200);
    const html = res.body.document_changes?.updated_html ?? "";
    expect(html).toMatch(/<h1[^>]*>Data Retention Policy<\/h1>/);
    expect(res.body.document_changes?.chunk_diffs.every((d) => d.operation === "create")).toBe(true);
    expect(res.body.usage.ops_charged).toBe(1);
  });
});

/** A chat turn on a corpus file uploaded as base64 under `filename`. */
function chatOnCorpusFile(message: string, filename: string, corpusPath: string) {
  return chat({
    message,
    upload_document_base64: { filename, file_base64: corpusFile(corpusPath).toString("base64") },
  });
}

describe("chat on real documents", () => {
  it("edits a docx with tables uploaded as base64 and keeps the tables", async () => {
    const res = await chatOnCorpusFile(
      'add row "x | y | z" to table 1',
      "various.docx",
      "docx/tika-testWORD_various.docx",
    );
    expect(res.status).toBe(200);
    const chunks = [...chunkMap(res.body.document_changes?.updated_html ?? "").values()];
    const tables = chunks.filter((h) => h.startsWith("<table"));
    expect(tables.length).toBeGreaterThanOrEqual(1);
    expect(tables[0].match(/<tr/g)?.length).toBe(3);
    expect(res.body.document_changes?.chunk_diffs[0].operation).toBe("edit");
  });

  it("keeps the merged cells of a real docx through load and storage", async () => {
    const res = await chatOnCorpusFile(
      'replace "a" with "a"',
      "merged.docx",
      "docx/pydocx-tbl-cell-access-merged.docx",
    );
    expect(res.status).toBe(200);
    const html = res.body.document_changes?.updated_html ?? "";
    expect(html.match(/<table/g)?.length).toBe(4);
    expect(html).toMatch(/colspan="2"/);
    expect(html).toMatch(/rowspan="2"/);
  });

  it("refuses a legacy .doc upload with 415 listing the supported extensions", async () => {
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: {
        message: "hi",
        upload_document_base64: {
          filename: "old.doc",
          file_base64: corpusFile("doc/tika-testWORD_various.doc").toString("base64"),
        },
      },
    });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { detail: string };
    for (const ext of [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"]) expect(body.detail).toContain(ext);
  });

  it("loads markdown and plain text uploads", async () => {
    const md = await chat({
      message: 'show section "Overview"',
      upload_document_base64: {
        filename: "notes.md",
        file_base64: Buffer.from("# Overview\n\nSome **bold** text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n").toString(
          "base64",
        ),
      },
    });
    expect(md.status).toBe(200);
    expect(md.body.document_changes?.updated_html).toContain("<table");
    const txt = await chat({
      message: 'replace "Alice" with "ALICE"',
      upload_document_base64: {
        filename: "alice.txt",
        file_base64: corpusFile("txt/snappy-alice29.txt").toString("base64"),
      },
      response_mode: "compact",
    });
    expect(txt.status).toBe(200);
    expect(txt.body.document_changes?.chunk_diffs.length).toBeGreaterThan(10);
  });
});
