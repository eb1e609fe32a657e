// The review playground (#34 part 3) in Debian's Chromium on the real stack: GET /playground on
// the stack's gateway, a pasted key, a fixture .docx uploaded, an edit asked in review mode that
// proposes two changes (the offline engine's `replace "…" with "…"` on a phrase two paragraphs
// hold), one approved and one denied with feedback, then docx exports downloaded (plain and with
// tracked changes) holding the approved change and not the denied one; a commit from another
// session reaches the page through doc-events; a version is restored from the versions panel.
// The page runs under its own strict CSP: any violation or console error fails the test.
// Screenshots go to .redline/playground-screenshots/.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "cheerio";
import JSZip from "jszip";
import mammoth from "mammoth";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "./support/chromium.js";
import { startStackWithKey } from "./support/file-stack.js";
import { corpusFile, REPO_ROOT } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

if (!hasChromium) console.warn(`playground: ${CHROMIUM} is absent, so the playground browser test is skipped`);

const SHOTS = join(REPO_ROOT, ".redline", "playground-screenshots");
const FIXTURE = "docx/tika-testWORD_various.docx";
/** "column 1" is in two paragraphs of the fixture ("Row 1 column 1", "Row 2 column 1"): two changes. */
const EDIT = 'replace "column 1" with "first column"';
const FEEDBACK = "Keep the second row as it was";

let stack: TestStack;
let key: string;
let browser: Browser;

beforeAll(async () => {
  // The gateway serves packages/playground/dist, which `pnpm codegen` builds; its playground step
  // alone here (a no-op when the build is current), so a run of this file alone sees the sources.
  const build = "import('./scripts/codegen.mjs').then((m) => m.playgroundBuild())";
  execFileSync(process.execPath, ["--input-type=module", "-e", build], { cwd: REPO_ROOT, stdio: "pipe" });
  ({ stack, key } = await startStackWithKey({ name: "playground" }, "playground-user"));
  if (hasChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** A download the click starts: its suggested name and bytes. */
async function download(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent("download"), click()]);
  const path = await file.path();
  return { name: file.suggestedFilename(), bytes: readFileSync(path) };
}

/** The text of a docx as mammoth (an independent reader) extracts it. */
async function docxText(bytes: Buffer): Promise<string> {
  return (await mammoth.extractRawText({ buffer: bytes })).value;
}

describe("GET /playground", () => {
  it("serves the page and its assets with a strict CSP, no framing and caching for hashed assets", async () => {
    const res = await fetch(`${stack.url}/playground`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of [
      "default-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data: blob:",
      "style-src 'self'",
      "script-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain("unsafe");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const html = await res.text();
    // No key or other secret in the page: the user pastes one.
    expect(html).not.toMatch(/sk_[0-9a-f]{8}/);
    expect(html).not.toContain(key);
    const script = /<script type="module" crossorigin src="(\/playground\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${stack.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-security-policy")).toBe(csp);
    expect((await fetch(`${stack.url}/playground/`)).status).toBe(200);
    const missing = await fetch(`${stack.url}/playground/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-frame-options")).toBe("DENY");
  });

  it.skipIf(!hasChromium)(
    "drives a review: upload a .docx, approve one change, deny one, export docx with only the approved change",
    async () => {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      // A loaded 2-core CI machine: Playwright's 30 s default is not what this test checks.
      page.setDefaultTimeout(90_000);
      const problems: string[] = [];
      const hosts = new Set<string>();
      page.on("request", (r) => hosts.add(new URL(r.url()).host));
      page.on("response", (r) => {
        if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
      });
      page.on("console", (m) => {
        if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(m.text());
      });
      page.on("pageerror", (err) => problems.push(String(err)));
      const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      try {
        await page.goto(`${stack.url}/playground`);
        await shot("01-start");
        await page.fill("#api-key", key);
        await page.click("#key-save");
        await page.locator("#usage").waitFor({ state: "visible" });
        expect(await page.textContent("#usage-text")).toContain("operations");
        // The key lives in this tab's sessionStorage only.
        expect(await page.evaluate(() => Object.values(sessionStorage))).toContain(key);
        expect(await page.evaluate(() => Object.values(localStorage))).not.toContain(key);

        await page.setInputFiles("#file", {
          name: "various.docx",
          mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
          buffer: corpusFile(FIXTURE),
        });
        const doc = page.locator(".rl-document");
        await expect.poll(() => doc.textContent(), { timeout: 45_000 }).toContain("Row 2 column 1");
        // Blocks and tables came through the ProseMirror schema with their chunk ids.
        expect(
          await page.locator(".rl-document table [data-chunk-id], .rl-document table[data-chunk-id]").count(),
        ).toBe(1);
        expect(await page.locator(".rl-document [data-chunk-id]").count()).toBeGreaterThan(20);
        const sessionId = (await page.getAttribute("body", "data-session-id")) as string;
        const documentId = (await page.getAttribute("body", "data-document-id")) as string;
        expect(sessionId).toBeTruthy();
        expect(documentId).toMatch(/^[0-9a-f-]{36}$/);
        await shot("02-uploaded");

        // Review mode is on by default: the async job stops at each proposed change.
        expect(await page.isChecked("#review-mode")).toBe(true);
        await page.fill("#message", EDIT);
        await page.click("#send");
        const cards = page.locator(".card");
        await expect.poll(() => cards.count(), { timeout: 45_000 }).toBe(2);
        // Both changed chunks are highlighted inline while they wait.
        await expect.poll(() => page.locator(".rl-document .rl-proposed-edit").count()).toBe(2);
        expect(await page.textContent("#review-count")).toBe("2");
        await shot("03-review");

        const first = page.locator('.card:has(.old:has-text("Row 1 column 1"))');
        const second = page.locator('.card:has(.old:has-text("Row 2 column 1"))');
        expect(await first.locator(".new").textContent()).toContain("Row 1 first column");
        expect(await first.locator(".explanation").count()).toBe(1);
        await first.locator("button.approve").click();
        await expect.poll(() => first.getAttribute("data-state")).toBe("approved");
        // The approved change is committed at once: the view shows it, marked as changed.
        await expect.poll(() => doc.textContent()).toContain("Row 1 first column");
        expect(await page.locator(".rl-document .rl-changed").count()).toBe(1);
        await second.locator("input.feedback").fill(FEEDBACK);
        await second.locator("button.deny").click();
        await expect.poll(() => second.getAttribute("data-state")).toBe("denied");
        expect(await second.locator(".decision").textContent()).toContain(FEEDBACK);

        // Every change decided: the job completes and its reply appears in the chat.
        await page.click('.tab[data-tab="chat"]');
        await page.locator(".message.ai").waitFor({ state: "visible", timeout: 45_000 });
        expect(await page.textContent(".message.ai")).toContain(FEEDBACK);
        expect(await doc.textContent()).toContain("Row 2 column 1");
        expect(await doc.textContent()).not.toContain("Row 2 first column");
        await shot("04-decided");

        // Exports: plain docx, then docx with tracked changes.
        await page.click('.tab[data-tab="export"]');
        await page.selectOption("#export-format", "docx");
        const plain = await download(page, () => page.click("#export"));
        expect(plain.name).toMatch(/\.docx$/);
        expect(plain.bytes.subarray(0, 2).toString("latin1")).toBe("PK");
        const text = await docxText(plain.bytes);
        expect(text).toContain("Row 1 first column");
        expect(text).toContain("Row 2 column 1");
        expect(text).not.toContain("Row 2 first column");
        await page.check("#export-track");
        const tracked = await download(page, () => page.click("#export"));
        const xml = (await (await JSZip.loadAsync(tracked.bytes)).file("word/document.xml")?.async("string")) ?? "";
        const $ = load(xml, { xml: true });
        const inserted = $("w\\:ins").find("w\\:t").text();
        const deleted = $("w\\:del").find("w\\:delText").text();
        // Word-level revisions of the approved paragraph only: "column 1" out, "first column" in.
        expect(inserted).toContain("first");
        expect(deleted.replace(/\s/g, "")).toContain("column");
        expect($("w\\:ins, w\\:del").parent().text()).not.toContain("Row 2");
        expect(xml).not.toContain("Row 2 first column");
        for (const format of ["pdf", "html", "markdown", "txt"] as const) {
          await page.selectOption("#export-format", format);
          const file = await download(page, () => page.click("#export"));
          expect(file.bytes.length, format).toBeGreaterThan(0);
          if (format === "pdf") expect(file.bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
          if (format === "markdown" || format === "txt") {
            expect(file.bytes.toString("utf8"), format).toContain("Row 1 first column");
          }
        }
        await shot("05-exported");

        // Another session edits the same document: the page hears of it through doc-events.
        const other = await stack.call("POST", "/v1/sessions/init", { key, body: { document_ids: [documentId] } });
        expect(other.status).toBe(200);
        const otherSession = ((await other.json()) as { session_id: string }).session_id;
        const edit = await stack.call("POST", "/v1/chat", {
          key,
          body: { session_id: otherSession, message: 'replace "Bullet" with "Point"' },
        });
        expect(edit.status).toBe(200);
        await page.locator("#sync-banner").waitFor({ state: "visible", timeout: 45_000 });
        await expect.poll(() => doc.textContent()).toContain("Point 2");
        expect(await page.locator(".rl-document .rl-synced").count()).toBe(1);
        await shot("06-synced");

        // Versions: the diff of the approved change, then a restore of the uploaded version.
        await page.click('.tab[data-tab="versions"]');
        const versions = page.locator(".version");
        await expect.poll(() => versions.count()).toBeGreaterThanOrEqual(3);
        // Newest first: #3 the other session's edit, #2 the approved change, #1 the upload.
        await page.click('.version[data-seq="2"] button.diff-button');
        await expect.poll(() => page.locator("#diff .card").count()).toBe(1);
        expect(await page.textContent("#diff .card .new")).toContain("Row 1 first column");
        await shot("07-versions-diff");
        await versions.last().locator("button.restore-button").click();
        await expect.poll(() => doc.textContent()).toContain("Row 1 column 1");
        expect(await doc.textContent()).toContain("Bullet 2");
        await expect.poll(() => page.textContent("#status")).toContain("Restored version");

        // A synchronous turn without review: applied at once, marked, and the meter counts it
        // (the review turn, the other session's turn and this one; restores are free).
        await page.click('.tab[data-tab="chat"]');
        await page.uncheck("#review-mode");
        await page.selectOption("#chat-mode", "sync");
        await page.fill("#message", 'replace "Keyword2" with "Keyword3"');
        await page.click("#send");
        await expect.poll(() => page.locator(".message.ai").count(), { timeout: 45_000 }).toBe(2);
        await expect.poll(() => doc.textContent()).toContain("Keyword1 Keyword3");
        expect(await page.locator(".rl-document .rl-changed").count()).toBe(1);
        await expect.poll(() => page.textContent("#usage-text")).toContain("3 / 500 operations");
        await shot("08-sync-chat");

        // Review again, and approve every proposal at once.
        await page.check("#review-mode");
        await page.fill("#message", 'replace "Number bullet" with "Step"');
        await page.click("#send");
        const pending = page.locator('#cards .card[data-state="pending"]');
        await expect.poll(() => pending.count(), { timeout: 45_000 }).toBeGreaterThanOrEqual(1);
        const proposed = await pending.count();
        if (proposed > 1) await page.click("#approve-all");
        else await pending.locator("button.approve").click();
        await expect.poll(() => page.locator('#cards .card[data-state="approved"]').count()).toBe(proposed);
        await expect.poll(() => page.locator(".message.ai").count(), { timeout: 45_000 }).toBe(3);
        await expect.poll(() => doc.textContent()).toContain("Step 3");
        expect(await doc.textContent()).not.toContain("Number bullet");

        expect(problems).toEqual([]);
        // The page spoke only to its own origin.
        expect([...hosts]).toEqual([new URL(stack.url).host]);
      } catch (err) {
        await shot("99-failure").catch(() => undefined);
        const shown = await page.evaluate(() => document.getElementById("status")?.textContent);
        throw new Error(`${String(err)}\nstatus: ${shown}\nproblems: ${problems.join("\n")}`);
      } finally {
        await context.close();
      }
    },
    180_000,
  );

  it.skipIf(!hasChromium)(
    "shows pasted HTML with its inline styles and tables under the CSP, its ids kept off the page's",
    async () => {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      // A loaded 2-core CI machine: Playwright's 30 s default is not what this test checks.
      page.setDefaultTimeout(90_000);
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(m.text());
      });
      page.on("pageerror", (err) => problems.push(String(err)));
      const hosts = new Set<string>();
      page.on("request", (r) => hosts.add(new URL(r.url()).host));
      try {
        await page.goto(`${stack.url}/playground`);
        await page.fill("#api-key", key);
        await page.click("#key-save");
        await page.locator("#usage").waitFor({ state: "visible" });
        await page.click("#paste-toggle");
        await page.fill(
          "#paste-html",
          '<h1 style="color: rgb(0, 128, 0)">Pasted</h1><p id="status">Styled <span style="font-weight: 700">bold</span></p>' +
            '<table><tr><td>a</td><td>b</td></tr></table><p><img src="https://images.example.com/logo.png" alt="Logo"></p>',
        );
        await page.click("#paste-load");
        const doc = page.locator(".rl-document");
        await expect.poll(() => doc.textContent(), { timeout: 45_000 }).toContain("Styled bold");
        // style-src 'self' refuses style attributes in markup; the view sets them through the CSSOM.
        expect(await doc.locator("h1").evaluate((el) => getComputedStyle(el).color)).toBe("rgb(0, 128, 0)");
        expect(await doc.getByText("bold", { exact: true }).evaluate((el) => getComputedStyle(el).fontWeight)).toBe(
          "700",
        );
        expect(await doc.locator("table td").count()).toBe(2);
        // The document's id="status" does not take the status bar's place.
        expect(await page.locator("#status").evaluate((el) => el.tagName)).toBe("SPAN");
        expect(await doc.locator("#doc-status").count()).toBe(1);
        // A remote image (if the sanitizer kept it) is not fetched: only the page's origin was asked.
        expect(await doc.locator('img[src^="https:"]').count()).toBe(0);
        expect([...hosts]).toEqual([new URL(stack.url).host]);
        expect(problems).toEqual([]);
        await page.screenshot({ path: join(SHOTS, "09-pasted-html.png") });
      } finally {
        await context.close();
      }
    },
    120_000,
  );
});
