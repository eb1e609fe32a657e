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
  /**
   * A fresh dir under the OS temp dir, removed after the test: mode 0755 by default, so the
   * "postgres" user (we are root) reaches a cluster inside it in place; 0o700 as mkdtemp makes it.
   */
  function tempDir(mode = 0o755): string {
    const dir = mkdtempSync(join(os.tmpdir(), prefix));
    chmodSync(dir, mode);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  return { cleanups, tempDir };
}
