// Keep-alive across Node's 5 s idle boundary (#33 part 5): a pooled client (or the Ingress)
// reuses a connection the gateway has kept idle past 5 s. The real gateway over HTTP with every
// service down (liveness GET /health needs none); a short KEEP_ALIVE_TIMEOUT_MS keeps the test fast.
import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayConfig, httpServerTimeouts, loadConfig } from "./config.js";
import { type RunningGateway, startGateway } from "./service.js";

const CLOSED = "127.0.0.1:1";
const addrs = { documents: CLOSED, sessions: CLOSED, agent: CLOSED, billing: CLOSED, ingest: CLOSED };
const PARALLEL = 20;
/** Idle time between the two rounds: past Node's 5 s default, under the 8 s configured below. */
const IDLE_MS = 6_000;

let longer: RunningGateway;
let nodeDefault: RunningGateway;

beforeAll(async () => {
  longer = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", keepAliveTimeoutMs: 8_000 }));
  nodeDefault = await startGateway(gatewayConfig({ port: 0, addrs, logLevel: "silent", keepAliveTimeoutMs: 5_000 }));
});

afterAll(async () => {
  await longer?.close();
  await nodeDefault?.close();
});

/** GET /health on `agent`; resolves to the status and the socket's local port (which connection carried it). */
function get(gw: RunningGateway, agent: Agent): Promise<{ status: number; localPort: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}/health`, { agent }, (res) => {
      const localPort = res.socket.localPort ?? 0;
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, localPort }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Two rounds of PARALLEL requests on one keep-alive pool, IDLE_MS apart: the connections each used. */
async function twoRounds(gw: RunningGateway): Promise<{ first: Set<number>; second: Set<number> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: PARALLEL });
  try {
    const round = async () => {
      const answers = await Promise.all(Array.from({ length: PARALLEL }, () => get(gw, agent)));
      // Liveness needs no backend: every request answered, none reset.
      for (const answer of answers) expect(answer.status).toBe(200);
      return new Set(answers.map((answer) => answer.localPort));
    };
    const first = await round();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const second = await round();
    return { first, second };
  } finally {
    agent.destroy();
  }
}

describe("keep-alive", () => {
  it("keeps pooled connections idle past Node's 5 s and serves 20 parallel requests on the same sockets", async () => {
    const [kept, closed] = await Promise.all([twoRounds(longer), twoRounds(nodeDefault)]);
    expect(kept.first.size).toBe(PARALLEL);
    // Same sockets: no new connection was opened for the second round.
    expect([...kept.second].every((port) => kept.first.has(port))).toBe(true);
    // The contrast: at Node's 5 s the gateway closed them all, and the pool had to reconnect.
    expect(closed.first.size).toBe(PARALLEL);
    expect([...closed.second].some((port) => closed.first.has(port))).toBe(false);
  }, 30_000);

  it("defaults to 65 s, with the headers timeout above it unless one is set", () => {
    expect(httpServerTimeouts(loadConfig({}))).toEqual({
      requestTimeout: 300_000,
      headersTimeout: 66_000,
      keepAliveTimeout: 65_000,
    });
    expect(httpServerTimeouts(loadConfig({ KEEP_ALIVE_TIMEOUT_MS: "120000" })).headersTimeout).toBe(121_000);
    expect(httpServerTimeouts(loadConfig({ KEEP_ALIVE_TIMEOUT_MS: "2000" })).headersTimeout).toBe(60_000);
    // A set HEADERS_TIMEOUT_MS is kept (Node 20 times headers from a request's first byte, not the idle time).
    expect(httpServerTimeouts(loadConfig({ HEADERS_TIMEOUT_MS: "3000" })).headersTimeout).toBe(3_000);
    // node:http refuses a headers timeout above the request timeout.
    expect(httpServerTimeouts(loadConfig({ REQUEST_TIMEOUT_MS: "4000" })).headersTimeout).toBe(4_000);
    expect(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: "0" })).toThrow(/KEEP_ALIVE_TIMEOUT_MS/);
  });
});
