// The model engine and attachments over a scripted OpenAI-compatible server (real HTTP): the
// turn offers search_attachments and quote_attachment, a tool call returns passages from
// Postgres full-text search, and completed image attachments reach the model as vision input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedStackWithKey } from "./support/file-stack.js";
import { lastToolResultJson, type ScriptedOpenAi } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let key: string;

// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

beforeAll(async () => {
  ({ model, stack, key } = await startScriptedStackWithKey(
    { name: "attachments_openai" },
    { model: "m", requestTimeoutMs: 60_000, maxSteps: 6 },
    "vera",
  ));
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

async function attach(filename: string, base64: string) {
  const res = await stack.call("POST", "/v1/attachments/upload-base64", {
    key,
    body: { filename, file_base64: base64, session_id: "vision-1" },
  });
  expect(res.status).toBe(200);
}

describe("attachments with a model", () => {
  it("searches attachments through a tool and sends image attachments as vision input", async () => {
    await attach(
      "policy.md",
      Buffer.from("# Policy\n\nRefunds are issued within 14 days of a return.").toString("base64"),
    );
    await attach("diagram.png", PNG);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await stack.call("GET", "/v1/attachments/status/vision-1", { key });
      const body = (await res.json()) as { attachments: { status: string }[] };
      if (body.attachments.length === 2 && body.attachments.every((a) => a.status === "completed")) break;
      if (Date.now() > deadline) throw new Error(`not completed: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    let toolResult: { passages?: { filename: string; text: string }[] } = {};
    model.push({ toolCalls: [{ name: "search_attachments", arguments: '{"query":"refunds"}' }] }, (request) => {
      toolResult = lastToolResultJson(request);
      return { content: "Refunds take 14 days." };
    });
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { session_id: "vision-1", message: "What does the policy say about refunds?" },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { response: string }).response).toBe("Refunds take 14 days.");

    const first = model.requests.at(-2);
    expect(first?.tools?.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["search_attachments", "quote_attachment"]),
    );
    const user = first?.messages.filter((m) => m.role === "user").at(-1);
    const parts = Array.isArray(user?.content) ? user.content : [];
    expect(parts.some((p) => p.type === "image_url" && p.image_url?.url.startsWith("data:image/png;base64,"))).toBe(
      true,
    );
    expect(toolResult.passages?.[0]).toMatchObject({ filename: "policy.md" });
    expect(toolResult.passages?.[0].text).toContain("Refunds are issued within 14 days");
  });
});
