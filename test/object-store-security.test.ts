// The object store is a security boundary (docs/security.md): the embedded S3 answers
// only signed requests (unsigned, stripped, tampered or S3RVER-signed ones get 403), pre-signed
// links work as signed and serve downloads inert (attachment, CSP sandbox, nosniff), and
// GET /v1/media never serves active content: SVG images are removed on upload.
// Real gateway, services, Postgres and the embedded S3 from test/global-setup.ts; plain fetch
// against the store's endpoint for everything a stranger could send.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createDb, createObjectStore, type Knex, type ObjectStore } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

const infra = inject("infra");
const CSP = "default-src 'none'; sandbox";
// A 1×1 transparent PNG.
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const SCRIPT_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><script>alert(1)</script>' +
  '<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><iframe src="https://evil.example"/></body></foreignObject>' +
  '<image href="https://evil.example/track.png"/></svg>';

let stack: TestStack;
let key: string;
let ingestDb: Knex;
let store: ObjectStore;

beforeAll(async () => {
  stack = await startTestStack(infra, { name: "objstore" });
  key = await stack.createKey("olga");
  ingestDb = createDb(stack.databaseUrl, "ingest", 2);
  store = createObjectStore(infra.s3);
});
afterAll(async () => {
  await ingestDb?.destroy();
  await stack?.close();
});

async function expectDenied(res: Response, code = "AccessDenied"): Promise<void> {
  expect(res.status).toBe(403);
  expect(await res.text()).toContain(`<Code>${code}</Code>`);
}

/** A pre-signed link with one query parameter changed (or removed, with value null). */
function withParam(url: string, name: string, value: string | null): string {
  const u = new URL(url);
  if (value === null) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return u.toString();
}

/** POST /v1/downloads of `html`, returning the link. */
async function downloadLink(html: string, format: string, filename: string): Promise<string> {
  const res = await stack.call("POST", "/v1/downloads", { key, body: { html, format, filename } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { download_url: string }).download_url;
}

describe("embedded object store: no anonymous access", () => {
  it("refuses unsigned list, get, head, put and delete with 403 while signed clients work", async () => {
    await store.put("objstore-test/secret.txt", Buffer.from("tenant secret"), "text/plain");
    const base = `${infra.s3.endpoint}/${infra.s3.bucket}`;
    await expectDenied(await fetch(infra.s3.endpoint));
    await expectDenied(await fetch(base));
    await expectDenied(await fetch(`${base}?list-type=2&prefix=`));
    await expectDenied(await fetch(`${base}/objstore-test/secret.txt`));
    expect((await fetch(`${base}/objstore-test/secret.txt`, { method: "HEAD" })).status).toBe(403);
    await expectDenied(await fetch(`${base}/objstore-test/secret.txt`, { method: "PUT", body: "overwritten" }));
    await expectDenied(await fetch(`${base}/objstore-test/secret.txt`, { method: "DELETE" }));
    // The services' minio client (signed with the generated keys) still reads, writes and lists.
    expect((await store.get("objstore-test/secret.txt")).toString()).toBe("tenant secret");
    const names: string[] = [];
    for await (const item of store.client.listObjectsV2(infra.s3.bucket, "objstore-test/", true))
      names.push(item.name as string);
    expect(names).toEqual(["objstore-test/secret.txt"]);
    await store.ping();
  });

  it("no longer accepts s3rver's public S3RVER/S3RVER key pair", async () => {
    expect(infra.s3.accessKey).not.toBe("S3RVER");
    const publicDefault = createObjectStore({ ...infra.s3, accessKey: "S3RVER", secretKey: "S3RVER" });
    await expect(publicDefault.get("objstore-test/secret.txt")).rejects.toThrow(/Access Key Id/);
    const link = await publicDefault.client.presignedGetObject(infra.s3.bucket, "objstore-test/secret.txt", 60);
    await expectDenied(await fetch(link), "InvalidAccessKeyId");
  });

  it("serves objects inert even without signed overrides: attachment, CSP sandbox, nosniff", async () => {
    await store.put("objstore-test/page.html", Buffer.from("<script>alert(1)</script>"), "text/html");
    const res = await fetch(await store.client.presignedGetObject(infra.s3.bucket, "objstore-test/page.html", 60));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-disposition")).toBe("attachment");
    await res.arrayBuffer();
  });
});

describe("pre-signed download links", () => {
  it("download as a sanitized attachment, and only with their signature intact", async () => {
    const link = await downloadLink(
      "<h1>Terms</h1><p>Pay in 30 days.</p>",
      "html",
      '../Q3 "plan" (draft)\u202e é.html',
    );
    const ok = await fetch(link);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/html/);
    expect(ok.headers.get("content-disposition")).toBe('attachment; filename="Q3 plan _draft_ _.html"');
    expect(ok.headers.get("content-security-policy")).toBe(CSP);
    expect(ok.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await ok.text()).toContain("Pay in 30 days.");

    // Signature stripped: alone, or with every auth parameter (an anonymous request).
    await expectDenied(await fetch(withParam(link, "X-Amz-Signature", null)));
    const bare = new URL(link);
    for (const name of [...bare.searchParams.keys()]) if (name.startsWith("X-Amz-")) bare.searchParams.delete(name);
    await expectDenied(await fetch(bare));
    // Tampered: the signature, the served headers it covers, or the object it names.
    const sig = new URL(link).searchParams.get("X-Amz-Signature") as string;
    const flipped = `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`;
    await expectDenied(await fetch(withParam(link, "X-Amz-Signature", flipped)), "SignatureDoesNotMatch");
    await expectDenied(await fetch(withParam(link, "response-content-disposition", "inline")), "SignatureDoesNotMatch");
    await expectDenied(await fetch(withParam(link, "response-content-type", "text/html")), "SignatureDoesNotMatch");
    const otherObject = new URL(link);
    otherObject.pathname = `/${infra.s3.bucket}/objstore-test/secret.txt`;
    await expectDenied(await fetch(otherObject), "SignatureDoesNotMatch");
  });

  it("pre-signed upload links accept the PUT as signed and refuse it stripped or tampered", async () => {
    const NOTES = "# Notes\n\nUploaded.";
    const created = await stack.call("POST", "/v1/uploads", {
      key,
      body: { filename: "notes.md", content_type: "text/markdown", size_bytes: NOTES.length, purpose: "document" },
    });
    expect(created.status).toBe(200);
    const slot = (await created.json()) as { upload_id: string; upload_url: string };
    await expectDenied(await fetch(withParam(slot.upload_url, "X-Amz-Signature", null), { method: "PUT", body: "x" }));
    await expectDenied(
      await fetch(withParam(slot.upload_url, "X-Amz-Signature", "0".repeat(64)), { method: "PUT", body: "x" }),
      "SignatureDoesNotMatch",
    );
    // Signed for PUT only: the same link does not read the object back.
    await expectDenied(await fetch(slot.upload_url), "SignatureDoesNotMatch");
    expect((await fetch(slot.upload_url, { method: "PUT", body: NOTES })).status).toBe(200);
    const processed = await stack.call("POST", `/v1/uploads/${slot.upload_id}/process`, {
      key,
      body: { return_html: true },
    });
    expect(processed.status).toBe(200);
    expect(((await processed.json()) as { html: string }).html).toContain("Uploaded.");
  });
});

describe("S3_PUBLIC_ENDPOINT", () => {
  it("signs links for the public origin, which a Host-preserving reverse proxy serves", async () => {
    // A reverse proxy in front of the store that passes the client's Host through.
    const target = new URL(infra.s3.endpoint);
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const publicEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const publicStore = createObjectStore(infra.s3, { publicEndpoint });
      await publicStore.put("objstore-test/public.txt", Buffer.from("via proxy"), "text/plain");
      const link = await publicStore.presignDownload("objstore-test/public.txt", 60, {
        filename: "public.txt",
        contentType: "text/plain",
      });
      expect(link.startsWith(`${publicEndpoint}/`)).toBe(true);
      const res = await fetch(link);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("via proxy");
      // The proxy is no way around the signature check.
      await expectDenied(await fetch(withParam(link, "X-Amz-Signature", null)));
      await expectDenied(await fetch(`${publicEndpoint}/${infra.s3.bucket}`));
      const upload = await publicStore.presignUpload("objstore-test/public-upload.txt", 60);
      expect((await fetch(upload, { method: "PUT", body: "uploaded via proxy" })).status).toBe(200);
      expect((await store.get("objstore-test/public-upload.txt")).toString()).toBe("uploaded via proxy");
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe("media: no SVG, served inert", () => {
  it("removes SVG images of any encoding from uploads, keeps raster ones, and serves them sandboxed", async () => {
    const svg64 = Buffer.from(SCRIPT_SVG).toString("base64");
    const html =
      `<h1>Pictures</h1><p><img alt="b64" src="data:image/svg+xml;base64,${svg64}"></p>` +
      `<p><img alt="utf8" src='data:image/svg+xml;utf8,${SCRIPT_SVG.replaceAll("'", '"')}'></p>` +
      `<p><img alt="pct" src="data:image/svg+xml,${encodeURIComponent(SCRIPT_SVG)}"></p>` +
      `<p><img alt="dot" src="data:image/png;base64,${PNG_BASE64}"></p>`;
    const res = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: {
        filename: "pictures.html",
        file_base64: Buffer.from(html).toString("base64"),
        session_id: "objstore-svg",
        return_html: true,
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { html: string; warnings: string[] };
    expect(body.html).not.toMatch(/svg|onload|<script|foreignObject|evil\.example/i);
    // The sanitizer then removes an <img> left without an allowed source, alt text included.
    expect(body.html).not.toMatch(/alt="(b64|utf8|pct)"/);
    expect(body.html).toMatch(/<img[^>]*alt="dot"/);
    expect(body.warnings.join(" ")).toMatch(/3 SVG image\(s\) were removed/);
    const ids = [...body.html.matchAll(/src="\/v1\/media\/([0-9a-f]{64})"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(1);
    const rows = await ingestDb("media").select("content_type");
    expect(rows.map((r) => r.content_type)).not.toContain("image/svg+xml");

    const png = await stack.call("GET", `/v1/media/${ids[0]}`, { key });
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(png.headers.get("content-disposition")).toBe(
      `inline; filename="${ids[0]}.png"; filename*=UTF-8''${ids[0]}.png`,
    );
    expect(png.headers.get("content-security-policy")).toBe(CSP);
    expect(png.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await png.arrayBuffer()).toString("base64")).toBe(PNG_BASE64);
  });

  it("serves an SVG stored before the refusal as an octet-stream attachment, and leaves it out of exports", async () => {
    const owner = (await ingestDb("media").first("owner_id")) as { owner_id: string };
    const id = "e".repeat(64);
    await store.put(`media/${id}`, Buffer.from(SCRIPT_SVG), "image/svg+xml");
    await ingestDb("media").insert({
      owner_id: owner.owner_id,
      id,
      content_type: "image/svg+xml",
      size_bytes: SCRIPT_SVG.length,
    });
    const res = await stack.call("GET", `/v1/media/${id}`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="${id}\\.bin"`));
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    await res.arrayBuffer();

    const exported = await stack.call("POST", "/v1/documents/export", {
      key,
      body: { html: `<p>x</p><p><img src="/v1/media/${id}"></p>`, format: "html", options: { embed_images: true } },
    });
    expect(exported.status).toBe(200);
    expect(await exported.text()).not.toMatch(/onload|<script|data:image\/svg/i);
  });
});
