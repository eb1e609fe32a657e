// Test support for the embedded-server tests: cleanups that run after each test, last first,
// and temp dirs that register their own removal.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/** Registers an afterEach that runs what `cleanups.push` received, in reverse order. */
export function testCleanups(prefix: string) {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  /** A fresh dir under the OS temp dir, removed after the test. */
  function tempDir(): string {
    const dir = mkdtempSync(join(os.tmpdir(), prefix));
    chmodSync(dir, 0o755); // postgres runs as the "postgres" user when we are root
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  return { cleanups, tempDir };
}
