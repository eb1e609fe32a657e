// GET /playground: the review playground (packages/playground, built by `pnpm codegen` with Vite),
// served as static files without a key. The page holds no secret: the user pastes an API key,
// which the page keeps in sessionStorage and sends as a Bearer header to this same origin.
// Every answer carries a strict CSP (scripts, styles, connections only from this origin; no
// framing), and Vite's content-hashed assets are cached for a year.
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestHandler, Response } from "express";

/** Where the gateway mounts the playground. */
export const PLAYGROUND_PATH = "/playground";

/**
 * The page's Content-Security-Policy. `style-src 'self'` also forbids inline `style` attributes
 * in markup; the document view sets a document's own styles through the CSSOM, which CSP allows.
 */
export const PLAYGROUND_CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self'",
  "script-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every playground answer, the 503 and 404 pages included. */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": PLAYGROUND_CSP,
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
};

/** Vite puts content-hashed files under assets/: a new build gets new names, so they never go stale. */
const IMMUTABLE = "public, max-age=31536000, immutable";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** A file path below the mount: segments of safe characters, no dot segments, a known extension. */
const SAFE_PATH = /^(\/[A-Za-z0-9_][A-Za-z0-9._-]*)+$/;

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Redline playground not built</title></head>
<body><h1>The Redline playground is not built</h1>
<p>Its files are missing on this gateway. Run <code>pnpm codegen</code> (or <code>pnpm start</code>,
which runs it) in the checkout, then reload this page.</p></body></html>
`;

/**
 * Where the built playground is looked for when PLAYGROUND_DIR is not set: `playground/` beside
 * the gateway's dist/ (the production image copies it there), else the workspace's
 * packages/playground/dist. This file sits at <gateway>/(src|dist)/api/playground/.
 */
export function defaultPlaygroundDirs(): string[] {
  const gatewayRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
  return [join(gatewayRoot, "playground"), resolve(gatewayRoot, "..", "..", "packages", "playground", "dist")];
}

function withHeaders(res: Response): Response {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  return res;
}

/**
 * The middleware mounted at PLAYGROUND_PATH: GET and HEAD of `/playground` or `/playground/`
 * answer index.html (no-cache), `/playground/<file>` a built file (assets/ immutable for a year),
 * an unknown file a 404 page; other methods fall through to the JSON 404. `dirs` are tried in
 * order on each request, so a build made after the gateway started is picked up; none built:
 * 503 with a page saying to run `pnpm codegen`.
 */
export function playgroundStatic(dirs: string[]): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    withHeaders(res);
    const dir = dirs.find((d) => existsSync(join(d, "index.html")));
    if (!dir) {
      res.status(503).type("html").setHeader("Cache-Control", "no-store").setHeader("Retry-After", "60");
      res.end(req.method === "HEAD" ? undefined : NOT_BUILT_PAGE);
      return;
    }
    const rel = req.path === "/" || req.path === "" ? "/index.html" : req.path;
    const type = CONTENT_TYPES[extname(rel)];
    const file = resolve(dir, `.${rel}`);
    if (!SAFE_PATH.test(rel) || !type || !file.startsWith(`${resolve(dir)}${sep}`)) return notFoundPage(res);
    try {
      if (!(await stat(file)).isFile()) return notFoundPage(res);
      const body = await readFile(file);
      res.status(200).setHeader("Content-Type", type);
      res.setHeader("Cache-Control", rel.startsWith("/assets/") ? IMMUTABLE : "no-cache");
      res.setHeader("Content-Length", String(body.length));
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return notFoundPage(res);
      next(err);
    }
  };
}

function notFoundPage(res: Response): void {
  res.status(404).type("text/plain").setHeader("Cache-Control", "no-store");
  res.end("Not found in the playground's files\n");
}
