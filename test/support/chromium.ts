// Debian's Chromium for the browser tests (playwright-core drives it; no browser download). The
// flags keep it off this machine's closed network and usable as root.
import { existsSync } from "node:fs";

/** Where Debian's chromium package installs the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** Launch flags: headless, as root, with no background connections that the closed network refuses. */
export const CHROMIUM_ARGS = [
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

/** Whether the browser is installed (scripts/setup.sh installs it); tests skip with a warning when not. */
export const hasChromium = existsSync(CHROMIUM);
