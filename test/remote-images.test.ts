// Pictures and links as the source wrote them (issue #32): a saved web page's remote and
// relative <img> and a README's badges keep their src and alt through upload, storage and
// export; nothing on the server fetches them (the "remote" host is a real HTTP server here that
// counts requests: PDF export prints offline); Markdown link destinations come back byte for
// byte, a second # in the fragment too; with REMOTE_IMAGES=drop ingest keeps none of them.
// Real gateway, services, Postgres, NATS and S3.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadHtml } from "@redline/ingest";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jsonCall } from "./support/documents-client.js";
import { postMultipart } from "./support/multipart.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let remote: Server;
let remoteUrl: string;
const requested: string[] = [];
let stack: TestStack;
let key: string;

beforeAll(async () => {
  remote = createServer((req, res) => {
    requested.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" }).end();
  });
  await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  stack = await startTestStack(inject("infra"), { name: "remote-images" });
  key = await stack.createKey("rita");
});
afterAll(async () => {
  await stack?.close();
  await new Promise((resolve) => remote?.close(resolve));
});

const ROOM = "https://chat.example/#/room/#name:host";

const savedPage = () =>
  Buffer.from(
    `<!doctype html><html><head><title>Saved</title></head><body>
<h1>Release notes <a href="https://ci.example/"><img src="${remoteUrl}/badge.png?branch=main" alt="build passing"></a></h1>
<p>Our logo <img src="/images/logo.png" alt="ACME logo"> and a chart <img src="figures/q3.png" alt="Q3 chart"></p>
<p>Not kept: <img src="javascript:alert(1)" alt="script"><img src="data:text/html,x" alt="page"></p>
</body></html>`,
  );
const readme = () =>
  Buffer.from(
    `# Project [![CI](${remoteUrl}/ci.svg?query=branch%3Amaster)](https://ci.example/)\n\nJoin [the room](${ROOM}) or <https://chat.example/#/room/#other:host>.\n`,
  );

/** Uploads a file into a new session; the stored document's HTML and the session id. */
async function upload(on: TestStack, k: string, filename: string, bytes: Buffer) {
  const res = await postMultipart(on, "/v1/documents/upload", k, { file: { bytes, filename } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { durable_document_id: string; session_id: string };
  const stored = await jsonCall(on, "GET", `/v1/documents/${body.durable_document_id}?include_html=true`, k);
  expect(stored.status).toBe(200);
  return { html: stored.body.html as string, sessionId: body.session_id };
}

const images = (html: string) => {
  const $ = loadHtml(html);
  return $("img")
    .map((_, img) => `${$(img).attr("src")} | ${$(img).attr("alt")}`)
    .get();
};

describe("remote and relative pictures", () => {
  it("a saved page keeps its remote and relative images with their alt; the server never fetches them", async () => {
    const { html, sessionId } = await upload(stack, key, "saved.html", savedPage());
    expect(images(html)).toEqual([
      `${remoteUrl}/badge.png?branch=main | build passing`,
      "/images/logo.png | ACME logo",
      "figures/q3.png | Q3 chart",
    ]);
    expect(html).not.toMatch(/javascript:|data:text/);
    // PDF export prints with the network blocked: the picture just does not render.
    const pdf = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: sessionId, format: "pdf" },
    });
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");
    const exported = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: sessionId, format: "html" },
    });
    expect(exported.status).toBe(200);
    expect(await exported.text()).toContain(`src="${remoteUrl}/badge.png?branch=main"`);
    expect(requested).toEqual([]);
  });

  it("a README keeps its badge and its link destinations byte for byte, there and back", async () => {
    const { html, sessionId } = await upload(stack, key, "README.md", readme());
    expect(images(html)).toEqual([`${remoteUrl}/ci.svg?query=branch%3Amaster | CI`]);
    const $ = loadHtml(html);
    expect(
      $("a")
        .map((_, a) => $(a).attr("href"))
        .get(),
    ).toEqual(["https://ci.example/", ROOM, "https://chat.example/#/room/#other:host"]);
    const md = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { session_id: sessionId, format: "markdown" },
    });
    expect(md.status).toBe(200);
    const text = await md.text();
    expect(text).toContain(`[the room](${ROOM})`);
    expect(text).toContain(`(${remoteUrl}/ci.svg?query=branch%3Amaster)`);
    expect(requested).toEqual([]);
  });
});

describe("REMOTE_IMAGES=drop", () => {
  let dropping: TestStack;
  let dropKey: string;
  beforeAll(async () => {
    dropping = await startTestStack(inject("infra"), { name: "remote-images-drop", ingest: { remoteImages: "drop" } });
    dropKey = await dropping.createKey("dora");
  });
  afterAll(async () => {
    await dropping?.close();
  });

  it("an upload keeps no remote or relative image, and its text and links stay", async () => {
    const page = await upload(dropping, dropKey, "saved.html", savedPage());
    expect(images(page.html)).toEqual([]);
    expect(page.html).toContain("Our logo");
    const md = await upload(dropping, dropKey, "README.md", readme());
    expect(images(md.html)).toEqual([]);
    expect(md.html).toContain(`href="${ROOM}"`);
    expect(requested).toEqual([]);
  });
});
