// HTML → PDF with headless Chromium: one warm browser per ingest process, launched on first use
// and relaunched if it dies; each export gets its own context with JavaScript and network off.
import { existsSync } from "node:fs";
import { UnavailableError } from "@redline/service-kit";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import type { ExportLayout } from "./export-formats.js";
import { type PdfPage, preparePdf } from "./pdf-page.js";

// ENVIRONMENT.md: the flags that let Chromium run as root in a container without a GPU.
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--disable-dev-shm-usage",
];
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const PRINT_TIMEOUT_MS = 60_000;

let browser: Promise<Browser> | null = null;

/** The Chromium binary: CHROMIUM_PATH when set by the service config, else the first installed candidate. */
function executable(path?: string): string {
  const found = path ?? CANDIDATES.find((c) => existsSync(c));
  if (!found || !existsSync(found))
    throw new UnavailableError("PDF export needs Chromium; run scripts/setup.sh (apt-get install chromium)");
  return found;
}

/** The process's browser, launched on first use (about a second), reused afterwards. */
export function warmBrowser(path?: string): Promise<Browser> {
  if (!browser) {
    const launching = chromium.launch({ executablePath: executable(path), args: CHROMIUM_ARGS, headless: true });
    browser = launching;
    launching.then(
      (b) =>
        b.on("disconnected", () => {
          if (browser === launching) browser = null;
        }),
      () => {
        if (browser === launching) browser = null;
      },
    );
  }
  return browser;
}

let context: Promise<BrowserContext> | null = null;

/**
 * The shared print context: JavaScript off, offline, every request but data: URLs aborted, so a
 * document can neither run code nor fetch anything. Pages are opened per export and closed.
 */
function warmContext(path?: string): Promise<BrowserContext> {
  if (!context) {
    const creating = warmBrowser(path).then(async (b) => {
      const ctx = await b.newContext({ javaScriptEnabled: false, offline: true });
      await ctx.route("**/*", (route) =>
        route.request().url().startsWith("data:") ? route.continue() : route.abort("blockedbyclient"),
      );
      ctx.on("close", () => {
        if (context === creating) context = null;
      });
      return ctx;
    });
    context = creating;
    creating.catch(() => {
      if (context === creating) context = null;
    });
  }
  return context;
}

/** Closes the warm browser, if any (service shutdown). */
export async function closeBrowser(): Promise<void> {
  context = null;
  const b = browser;
  browser = null;
  if (b) await (await b.catch(() => null))?.close();
}

/** What to print. Images must already be data: URLs (the page cannot fetch anything). */
export interface PdfInput {
  html: string;
  title: string;
  layout: ExportLayout;
  watermarkText?: string;
  watermarkOpacity?: number;
  chromiumPath?: string;
}

/**
 * Prints a prepared page to PDF on the layout's paper and margins; headers and footers repeat
 * on every page; the watermark sits over each page. Throws UnavailableError when Chromium is
 * missing and playwright's TimeoutError past PRINT_TIMEOUT_MS.
 */
export async function printPdf(prepared: PdfPage, layout: ExportLayout, chromiumPath?: string): Promise<Buffer> {
  const context = await warmContext(chromiumPath);
  const page = await context.newPage();
  try {
    page.setDefaultTimeout(PRINT_TIMEOUT_MS);
    await page.setContent(prepared.page, { waitUntil: "load", timeout: PRINT_TIMEOUT_MS });
    const pdf = await page.pdf({
      width: `${layout.widthIn}in`,
      height: `${layout.heightIn}in`,
      landscape: layout.orientation === "landscape",
      margin: {
        top: `${layout.margins.top}in`,
        right: `${layout.margins.right}in`,
        bottom: `${layout.margins.bottom}in`,
        left: `${layout.margins.left}in`,
      },
      printBackground: true,
      displayHeaderFooter: prepared.displayHeaderFooter,
      headerTemplate: prepared.headerTemplate,
      footerTemplate: prepared.footerTemplate,
    });
    return Buffer.from(pdf);
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** preparePdf then printPdf in this thread (tools and tests; the service prepares in the pool). */
export async function htmlToPdf(input: PdfInput): Promise<Buffer> {
  return printPdf(preparePdf(input), input.layout, input.chromiumPath);
}
