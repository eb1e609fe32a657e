// response_mode told to the engines (#36 part 2): in compact mode the client gets the reply and
// the changed chunks, never the document, so a section the user asks to see comes in the reply
// text (interface spec, endpoint 1). The OpenAI engine is told so in its system prompt (checked on
// what the scripted server received); the offline engine's "show section" puts the whole section in.
import { WorkingDocument } from "@redline/html-chunks";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastToolResultJson,
  type RecordedRequest,
  type ScriptedOpenAi,
  startScriptedOpenAi,
} from "../../../../test/support/scripted-openai.js";
import { createOfflineEngine } from "./offline.js";
import { createOpenAiEngine } from "./openai.js";
import { plainTurn } from "./types.js";

const DOC_HTML = [
  '<h1 data-chunk-id="c_title">Acme Services Agreement</h1>',
  '<h2 data-chunk-id="c_fees">3. Fees</h2>',
  '<p data-chunk-id="c_fees_p">The Client pays <strong>$1,200</strong> a month, invoiced quarterly.</p>',
  '<h2 data-chunk-id="c_term">4. Term</h2>',
  '<p data-chunk-id="c_term_p">This agreement lasts twelve months.</p>',
].join("\n");

/** A section whose text is well past the full mode's 20,000 characters: 600 rows of about 60. */
function longSectionHtml(): string {
  const rows = Array.from(
    { length: 600 },
    (_, i) =>
      `<tr><td>Item ${i + 1}</td><td>Replacement part number ${String(i + 1).padStart(5, "0")} for the pump</td></tr>`,
  ).join("");
  return `<h2 data-chunk-id="c_parts">Parts</h2><table data-chunk-id="c_parts_t"><tbody>${rows}</tbody></table><h2 data-chunk-id="c_end">End</h2>`;
}

let server: ScriptedOpenAi | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function systemPromptOf(request: RecordedRequest): string {
  const system = request.messages[0];
  expect(system.role).toBe("system");
  return typeof system.content === "string" ? system.content : "";
}

describe("OpenAI engine and response_mode", () => {
  it("tells the model in compact mode that the section it is asked to show goes in the reply", async () => {
    // The model reads the chunk it is asked for, then answers with its text.
    const answer = (request: RecordedRequest) => {
      const read = lastToolResultJson<{ chunks: { html: string }[] }>(request);
      const texts = read.chunks.map((chunk) => chunk.html.replace(/<[^>]+>/g, ""));
      return { content: `## ${texts.join("\n\n")}` };
    };
    server = await startScriptedOpenAi([
      { toolCalls: [{ name: "read_chunks", arguments: JSON.stringify({ chunk_ids: ["c_fees", "c_fees_p"] }) }] },
      answer,
      // The same request in full mode.
      { content: "Section 3 sets the fees." },
    ]);
    const engine = createOpenAiEngine({
      baseURL: server.url,
      apiKey: "sk-test",
      models: { core: "m", turbo: "m", pro: "m", max: "m" },
      requestTimeoutMs: 5_000,
      maxSteps: 4,
      maxRetries: 0,
    });
    const compact = await engine.runTurn(
      plainTurn("show me section 3", WorkingDocument.fromHtml(DOC_HTML), { responseMode: "compact" }),
    );
    expect(compact.reply).toContain("The Client pays $1,200 a month, invoiced quarterly.");
    const compactPrompt = systemPromptOf(server.requests[0]);
    expect(compactPrompt).toContain("compact mode");
    expect(compactPrompt).toContain("put its full content in your reply");
    expect(compactPrompt).not.toContain("Do not paste the document.");

    await engine.runTurn(plainTurn("show me section 3", WorkingDocument.fromHtml(DOC_HTML)));
    const fullPrompt = systemPromptOf(server.requests[2]);
    expect(fullPrompt).not.toContain("compact mode");
    expect(fullPrompt).toContain("Do not paste the document.");
  });
});

describe("offline engine and response_mode", () => {
  const engine = createOfflineEngine();

  it("puts a compact show section's text in the reply and changes nothing", async () => {
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const out = await engine.runTurn(plainTurn('show section "Fees"', doc, { responseMode: "compact" }));
    expect(out.reply).toContain("## 3. Fees");
    expect(out.reply).toContain("The Client pays $1,200 a month, invoiced quarterly.");
    expect(out.reply).not.toContain("twelve months");
    expect(doc.operations()).toEqual([]);
  });

  it("in compact mode shows a long section whole, where full mode cuts it at 20,000 characters", async () => {
    const message = 'show section "Parts"';
    const compact = await engine.runTurn(
      plainTurn(message, WorkingDocument.fromHtml(longSectionHtml()), { responseMode: "compact" }),
    );
    expect(compact.reply).toContain("Item 600 | Replacement part number 00600 for the pump");
    expect(compact.reply).not.toContain("cut at");
    const full = await engine.runTurn(plainTurn(message, WorkingDocument.fromHtml(longSectionHtml())));
    expect(full.reply).toContain("Item 1 | Replacement part number 00001 for the pump");
    expect(full.reply).not.toContain("Item 600 |");
    expect(full.reply).toContain("(cut at 20000 characters)");
  });
});
