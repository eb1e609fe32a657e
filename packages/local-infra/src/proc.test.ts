// freePort: ports for servers started later, drawn where nothing else is handed them meanwhile.
import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "./proc.js";

describe("freePort", () => {
  it("hands out distinct bindable ports below the kernel's source-port range", async () => {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
    // Each can be bound by the server it was picked for.
    const servers = await Promise.all(
      ports.slice(0, 5).map(
        (port) =>
          new Promise<net.Server>((resolve, reject) => {
            const server = net.createServer().once("error", reject);
            server.listen(port, "127.0.0.1", () => resolve(server));
          }),
      ),
    );
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });
});
