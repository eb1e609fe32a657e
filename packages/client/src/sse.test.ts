// The event-stream parser against the HTML standard's parsing rules, fed the way a network
// delivers it: whole, one character at a time, and with CRLF split across chunks.
import { describe, expect, it } from "vitest";
import { readSse, type SseEvent, SseParser } from "./sse.js";

function parseChunks(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
  const parser = new SseParser();
  return { events: chunks.flatMap((c) => parser.feed(c)), parser };
}

const STREAM =
  "\uFEFF: heartbeat\r\n\r\n" +
  'id: 1\r\nevent: intermediate\r\ndata: {"a":1}\r\n\r\n' +
  "id: 2\nevent: final\ndata: line one\ndata:line two\n\n" +
  "retry: 1500\r" +
  'event: error\rdata: {"error":"x"}\r\r' +
  "id\nevent: usage\ndata\n\n";

const EXPECTED: SseEvent[] = [
  { id: "1", event: "intermediate", data: '{"a":1}' },
  { id: "2", event: "final", data: "line one\nline two" },
  { id: null, event: "error", data: '{"error":"x"}' },
  { id: "", event: "usage", data: "" },
];

describe("SseParser", () => {
  it("parses fields, comments, BOM and every line ending, in any chunking", () => {
    expect(parseChunks([STREAM]).events).toEqual(EXPECTED);
    expect(parseChunks([...STREAM]).events).toEqual(EXPECTED);
    // A CR at the end of one chunk and its LF at the start of the next are one line end.
    const cut = STREAM.indexOf("\r\n") + 1;
    expect(parseChunks([STREAM.slice(0, cut), STREAM.slice(cut)]).events).toEqual(EXPECTED);
  });

  it("keeps the last id and retry across events, and skips events without data", () => {
    const { events, parser } = parseChunks(["id: 7\n\n", "retry: nope\nid: 8\0\nevent: x\n\n", "retry: 900\n\n"]);
    expect(events).toEqual([]);
    expect(parser.lastEventId).toBe("7");
    expect(parser.retryMs).toBe(900);
  });

  it("defaults the event name to message and strips only one leading space", () => {
    expect(parseChunks(["data:  two spaces\n\n"]).events).toEqual([
      { id: null, event: "message", data: " two spaces" },
    ]);
  });

  it("reads a byte stream split inside a multi-byte character and drops an unfinished last event", async () => {
    const bytes = new TextEncoder().encode('id: 1\nevent: intermediate\ndata: "é🎉"\n\nid: 2\ndata: partial');
    const split = bytes.indexOf(0xf0) + 2;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, split));
        controller.enqueue(bytes.subarray(split));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const e of readSse(body)) events.push(e);
    expect(events).toEqual([{ id: "1", event: "intermediate", data: '"é🎉"' }]);
  });
});
