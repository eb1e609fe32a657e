// A browser review client works unchanged (#11): Chromium (playwright-core) loads a small static
// review page (test/support/review-page/) from its own origin on 127.0.0.1, which starts an async
// chat with approval by fetch, follows the progress stream with EventSource and ?api_key=, draws
// one card per proposed_change and approves or denies through the API. The page's origin differs
// from the gateway's, as a hosted review UI's does, so this also proves CORS.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "./support/chromium.js";
import { startStackWithKey } from "./support/file-stack.js";
import { sampleContract } from "./support/fixtures.js";
import { ADD_SECTION } from "./support/jobs.js";
import type { TestStack } from "./support/stack.js";

if (!hasChromium) console.warn(`browser-review: ${CHROMIUM} is absent, so the browser review test is skipped`);

const PAGE = readFileSync(new URL("./support/review-page/index.html", import.meta.url), "utf8");

let stack: TestStack;
let key: string;
let pageServer: Server;
let pageOrigin: string;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ stack, key } = await startStackWithKey({ name: "browser_review" }, "reviewer"));
  // The page's own origin: a tiny static server, another port than the gateway's.
  pageServer = createServer((req, res) => {
    if (req.method === "GET" && (req.url ?? "/").split("?")[0] === "/") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pageServer ? pageServer.close(resolve) : resolve(undefined)));
  await stack?.close();
});

/** The page's address for the gateway and key, plus `extra` query parameters. */
function pageUrl(extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ api: stack.url, key, ...extra });
  return `${pageOrigin}/?${query}`;
}

describe("browser review page", () => {
  it.skipIf(!hasChromium)(
    "approves one card, denies another, renders final; the document has only the approved change",
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const requested: string[] = [];
      const problems: string[] = [];
      page.on("request", (r) => requested.push(r.url()));
      page.on("response", (r) => {
        if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
      });
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text());
      });
      page.on("pageerror", (err) => problems.push(String(err)));
      try {
        await page.goto(pageUrl());
        await page.fill("#document", sampleContract());
        await page.fill("#message", ADD_SECTION);
        await page.click("#start");

        // The offline engine proposes the new heading and its paragraph: two cards.
        const cards = page.locator(".card");
        await expect.poll(() => cards.count(), { timeout: 20_000 }).toBe(2);
        await expect.poll(() => page.textContent("#status")).toBe("Review 2 proposed changes");
        const heading = page.locator('.card:has(.html:text("<h2"))');
        const paragraph = page.locator('.card:not(:has(.html:text("<h2")))');
        await heading.locator("button.approve").click();
        await expect.poll(() => heading.getAttribute("data-state")).toBe("approved");
        await paragraph.locator("input.feedback").fill("Say which liability");
        await paragraph.locator("button.deny").click();
        await expect.poll(() => paragraph.getAttribute("data-state")).toBe("denied");

        // Every change decided: the job completes and the stream's final is rendered.
        await page.locator("#final").waitFor({ state: "visible", timeout: 20_000 });
        expect(await page.textContent("#final")).toContain("Say which liability");
        expect(await page.textContent("#status")).toBe("Done");
        expect(await page.locator("#failure").isHidden()).toBe(true);
        expect(problems).toEqual([]);
        // The page spoke only to its own origin and the gateway, both on loopback.
        for (const url of requested) expect(new URL(url).hostname).toBe("127.0.0.1");
        // One EventSource connection, keyed in the query: the page closed it at the end of the turn
        // instead of letting the browser reconnect.
        const streams = requested.filter((u) => new URL(u).pathname.endsWith("/stream"));
        expect(streams).toHaveLength(1);
        expect(new URL(streams[0]).searchParams.get("api_key")).toBe(key);

        // The document through the API: the approved heading is in, the denied paragraph is not.
        const sessionId = await page.getAttribute("body", "data-session-id");
        const res = await stack.call("GET", `/v1/sessions/${sessionId}/history`, { key });
        const html = ((await res.json()) as { document_state: { html_content: string } }).document_state.html_content;
        expect(html).toContain("Liability</h2>");
        expect(html).not.toContain("Liability is capped.");
      } catch (err) {
        // What the page showed and logged explains a failure better than a timeout does.
        const shown = await page.evaluate(() => ({
          status: document.getElementById("status")?.textContent,
          failure: document.getElementById("failure")?.textContent,
        }));
        throw new Error(`${String(err)}\npage: ${JSON.stringify(shown)}\nconsole: ${problems.join("\n")}`);
      } finally {
        await context.close();
      }
    },
  );

  it.skipIf(!hasChromium)("shows the server's error for a review link to an unknown job and stops there", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const streams: string[] = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname.endsWith("/stream")) streams.push(r.url());
    });
    try {
      await page.goto(pageUrl({ session_id: "review-s1", job_id: "job_missing" }));
      await expect.poll(() => page.textContent("#status"), { timeout: 10_000 }).toBe("Failed");
      // The spec's error event reaches the page as data it can show, not as a dropped connection.
      expect(await page.textContent("#failure")).toBe("Job not found");
      expect(await page.locator(".card").count()).toBe(0);
      expect(streams).toHaveLength(1);
    } finally {
      await context.close();
    }
  });
});
