import { afterEach, describe, expect, it } from "vitest";
import { delayed, lastToolResultJson, type ScriptedOpenAi, startScriptedOpenAi } from "./scripted-openai.js";

let server: ScriptedOpenAi | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface StreamChunk {
  choices: {
    delta: {
      role?: string;
      content?: string;
      tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
}

function post(url: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
    body: JSON.stringify({ model: "m-1", messages: [{ role: "user", content: "hi" }], ...body }),
    signal,
  });
}

/** Reads an SSE body into its parsed `data:` chunks; `[DONE]` must be the last event. */
async function readStream(res: Response): Promise<StreamChunk[]> {
  const text = await res.text();
  const events = text
    .split("\n\n")
    .filter((event) => event.trim() !== "")
    .map((event) => event.replace(/^data: /, ""));
  expect(events[events.length - 1]).toBe("[DONE]");
  return events.slice(0, -1).map((event) => JSON.parse(event) as StreamChunk);
}

describe("scripted OpenAI-compatible server", () => {
  it("streams split tool-call arguments that reassemble by index", async () => {
    const args = JSON.stringify({ chunk_ids: ["c_1", "c_2"] });
    server = await startScriptedOpenAi([
      {
        toolCalls: [
          { name: "read_chunks", arguments: args },
          { name: "get_outline", arguments: "{}" },
        ],
        splitArgs: 4,
      },
    ]);
    const res = await post(server.url, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const chunks = await readStream(res);
    const assembled: { id: string; name: string; args: string }[] = [];
    let fragments = 0;
    for (const chunk of chunks) {
      for (const call of chunk.choices[0].delta.tool_calls ?? []) {
        fragments++;
        assembled[call.index] ??= { id: "", name: "", args: "" };
        if (call.id) assembled[call.index].id = call.id;
        if (call.function?.name) assembled[call.index].name = call.function.name;
        assembled[call.index].args += call.function?.arguments ?? "";
      }
    }
    expect(fragments).toBe(4 + 2);
    expect(assembled.map((call) => [call.name, call.args])).toEqual([
      ["read_chunks", args],
      ["get_outline", "{}"],
    ]);
    expect(assembled.every((call) => call.id.startsWith("call_"))).toBe(true);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe("tool_calls");
    expect(server.requests[0].model).toBe("m-1");
    expect(server.requestHeaders[0].authorization).toBe("Bearer sk-test");
  });

  it("answers without streaming when stream is not set", async () => {
    server = await startScriptedOpenAi([
      { content: "hello there" },
      { toolCalls: [{ name: "x", arguments: "{oops" }] },
    ]);
    const first = (await (await post(server.url, {})).json()) as {
      object: string;
      choices: { message: { content: string }; finish_reason: string }[];
    };
    expect(first.object).toBe("chat.completion");
    expect(first.choices[0]).toMatchObject({ message: { content: "hello there" }, finish_reason: "stop" });
    const second = (await (await post(server.url, {})).json()) as {
      choices: { message: { content: string | null; tool_calls: { function: { arguments: string } }[] } }[];
    };
    expect(second.choices[0].message.content).toBeNull();
    expect(second.choices[0].message.tool_calls[0].function.arguments).toBe("{oops");
  });

  it('answers "done" once the script is exhausted, and push() extends it', async () => {
    server = await startScriptedOpenAi();
    const chunks = await readStream(await post(server.url, { stream: true }));
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? "").join("")).toBe("done");
    server.push({ content: "abcdef", splitContent: 3 });
    const pieces = (await readStream(await post(server.url, { stream: true })))
      .map((chunk) => chunk.choices[0].delta.content)
      .filter((piece) => piece);
    expect(pieces).toEqual(["ab", "cd", "ef"]);
  });

  it("returns scripted HTTP errors with an OpenAI-style body", async () => {
    server = await startScriptedOpenAi([{ status: 503 }, { status: 400, body: '{"error":{"message":"bad model"}}' }]);
    const first = await post(server.url, { stream: true });
    expect(first.status).toBe(503);
    expect(((await first.json()) as { error: { message: string } }).error.message).toContain("503");
    const second = await post(server.url, {});
    expect(second.status).toBe(400);
    expect(await second.text()).toBe('{"error":{"message":"bad model"}}');
  });

  it("lets a function step react to the previous tool result", async () => {
    server = await startScriptedOpenAi([
      (request) => {
        const outline = lastToolResultJson<{ first: string }>(request);
        return { content: `target ${outline.first}` };
      },
    ]);
    const res = await post(server.url, {
      messages: [
        { role: "user", content: "edit" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "a", type: "function", function: { name: "get_outline", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "a", content: JSON.stringify({ first: "c_9" }) },
      ],
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0].message.content).toBe("target c_9");

    // A function step may return a delay whose next step is itself a function.
    server.push(() => delayed(20, (request) => ({ content: `model ${request.model}` })));
    const delayedBody = (await (await post(server.url, {})).json()) as { choices: { message: { content: string } }[] };
    expect(delayedBody.choices[0].message.content).toBe("model m-1");
  });

  it("stalls a stream after the headers for delayMs, and stops waiting when the client leaves", async () => {
    server = await startScriptedOpenAi([delayed(10_000, { content: "late" }), delayed(50, { content: "ok" })]);
    const controller = new AbortController();
    const started = Date.now();
    const res = await post(server.url, { stream: true }, controller.signal);
    // Headers arrive at once even though the content is 10 s away.
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    controller.abort();
    await expect(res.text()).rejects.toThrow();
    const chunks = await readStream(await post(server.url, { stream: true }));
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? "").join("")).toBe("ok");
  });

  it("serves GET /v1/models and 404s unknown routes", async () => {
    server = await startScriptedOpenAi();
    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data[0].id).toBe("scripted-model");
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect(server.requests).toHaveLength(0);
  });
});
