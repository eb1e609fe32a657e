// Chat image attachments are checked at the gateway before the model sees them (issue 36, part
// 2): the type by magic bytes (PNG, JPEG, GIF, WebP), a 20 MiB size cap and a 20-item cap. A bad
// item is a 422 in the spec's validation shape naming it, never a 503 that invites a retry, and
// the scripted model server is not called for it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedStackWithKey } from "./support/file-stack.js";
import type { ScriptedOpenAi } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let key: string;

// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const png = (name = "dot.png") => ({ id: name, name, base64Data: PNG, mimeType: "image/png" });

beforeAll(async () => {
  ({ model, stack, key } = await startScriptedStackWithKey(
    { name: "image_attachments" },
    { model: "m", requestTimeoutMs: 60_000, maxSteps: 4 },
    "iris",
  ));
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

interface Issue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

async function chat(path: string, images: unknown[]): Promise<{ status: number; body: { detail?: Issue[] } }> {
  const res = await stack.call("POST", path, {
    key,
    body: { message: "Describe the images", image_attachments: images },
  });
  return { status: res.status, body: (await res.json()) as { detail?: Issue[] } };
}

describe("image attachments on chat", () => {
  it("sends a PNG and a data: URL JPEG to the model as vision input", async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0]).toString("base64");
    model.push({ content: "A dot and a photo." });
    const res = await chat("/v1/chat", [
      png(),
      { name: "photo.jpg", base64Data: `data:image/jpeg;base64,${jpeg}`, mimeType: "image/jpg" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const user = model.requests
      .at(-1)
      ?.messages.filter((m) => m.role === "user")
      .at(-1);
    const urls = (Array.isArray(user?.content) ? user.content : []).flatMap((p) =>
      p.type === "image_url" && p.image_url ? [p.image_url.url.slice(0, p.image_url.url.indexOf(",") + 2)] : [],
    );
    expect(urls).toEqual(["data:image/png;base64,i", "data:image/jpeg;base64,/"]);
  });

  it("refuses an item whose bytes are no image with 422 naming the item, without calling the model", async () => {
    const calls = model.requests.length;
    const text = Buffer.from("%PDF-1.7 this is not an image").toString("base64");
    for (const path of ["/v1/chat", "/v1/chat/async"]) {
      const res = await chat(path, [png(), { name: "x.png", base64Data: text, mimeType: "image/png" }]);
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        {
          type: "value_error",
          loc: ["body", "image_attachments", 1],
          msg: "Image data is not a PNG, JPEG, GIF or WebP image (its bytes match none of them)",
        },
      ]);
    }
    expect(model.requests.length).toBe(calls);
  });

  it("refuses a mimeType that names another type than the bytes, and an image over 20 MiB", async () => {
    const mislabeled = await chat("/v1/chat", [{ ...png(), mimeType: "image/gif" }]);
    expect(mislabeled.status).toBe(422);
    expect(mislabeled.body.detail).toEqual([
      {
        type: "value_error",
        loc: ["body", "image_attachments", 0],
        msg: "mimeType 'image/gif' does not match the image data, which is image/png",
      },
    ]);

    const big = Buffer.alloc(20 * 1024 * 1024 + 1);
    Buffer.from(PNG, "base64").copy(big);
    const oversized = await chat("/v1/chat", [
      png(),
      png("b.png"),
      { ...png("big.png"), base64Data: big.toString("base64") },
    ]);
    expect(oversized.status).toBe(422);
    expect(oversized.body.detail).toEqual([
      {
        type: "value_error",
        loc: ["body", "image_attachments", 2],
        msg: `Image is ${big.length} bytes; at most 20971520 bytes (20 MiB) are accepted`,
      },
    ]);
  });

  it("refuses more than 20 images with 422 on the field, and bad base64 on the item's base64Data", async () => {
    const many = await chat(
      "/v1/chat",
      Array.from({ length: 21 }, (_, i) => png(`p${i}.png`)),
    );
    expect(many.status).toBe(422);
    expect(many.body.detail?.[0]).toMatchObject({ type: "too_long", loc: ["body", "image_attachments"] });

    const garbled = await chat("/v1/chat", [{ ...png(), base64Data: "not base64!" }]);
    expect(garbled.status).toBe(422);
    expect(garbled.body.detail).toEqual([
      { type: "base64_decode", loc: ["body", "image_attachments", 0, "base64Data"], msg: expect.any(String) },
    ]);
  });
});
