import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { startPeriodic } from "./periodic.js";

/** A logger whose lines land in `lines`, parsed. */
function capturingLogger() {
  const lines: { level: number; msg: string; err?: { message: string } }[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: createLogger("periodic-test", "info", destination), lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("startPeriodic", () => {
  it("never runs two passes at once: ticks while a pass runs are skipped, not queued", async () => {
    const { log } = capturingLogger();
    let running = 0;
    let most = 0;
    let passes = 0;
    const periodic = startPeriodic("slow pass", 10, log, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(60);
      running--;
      passes++;
    });
    // Six ticks come due during each pass; none of them may start a second one.
    while (passes < 3) await sleep(5);
    await periodic.stop();
    expect(most).toBe(1);
    // Queued ticks would go on running after stop().
    const stopped = passes;
    await sleep(100);
    expect(passes).toBe(stopped);
  });

  it("logs a pass that throws under its name and runs the next one", async () => {
    const { log, lines } = capturingLogger();
    let calls = 0;
    const periodic = startPeriodic("removing things", 10, log, async () => {
      calls++;
      if (calls === 1) throw new Error("store unreachable");
    });
    while (calls < 3) await sleep(5);
    await periodic.stop();
    const warned = lines.filter((l) => l.msg === "removing things failed");
    expect(warned).toHaveLength(1);
    expect(warned[0].err?.message).toBe("store unreachable");
  });

  it("stop() waits for the pass under way and no pass starts after it", async () => {
    const { log } = capturingLogger();
    let finished = 0;
    let started = 0;
    const periodic = startPeriodic("pass", 5, log, async () => {
      started++;
      await sleep(50);
      finished++;
    });
    while (started === 0) await sleep(2);
    await periodic.stop();
    expect(finished).toBe(started);
    await sleep(30);
    expect(started).toBe(finished);
  });
});
