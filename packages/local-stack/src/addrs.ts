// Where a stack's services listen: each service's *_ADDR (the gateway's HOST and PORT) with the
// local defaults, and a set of fresh loopback ports for stacks that run side by side.
import { freePort } from "@redline/local-infra";
import { readAddrs } from "@redline/service-kit";
import type { ServiceName } from "./names.js";

/** host:port of each gRPC service and of the gateway's HTTP listener. */
export type StackAddrs = Record<ServiceName, string>;

/** The variable each service's address is read from (for error messages). */
export const ADDR_VARIABLE: Record<ServiceName, string> = {
  documents: "DOCUMENTS_ADDR",
  sessions: "SESSIONS_ADDR",
  agent: "AGENT_ADDR",
  billing: "BILLING_ADDR",
  ingest: "INGEST_ADDR",
  gateway: "HOST/PORT",
};

/** host and port of "host:port" (IPv6 hosts in brackets); throws naming `variable` when it is not one. */
export function parseAddr(addr: string, variable: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  const port = Number(addr.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`${variable}=${addr} is not host:port`);
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ""), port };
}

/** Where to connect to a listener bound to `host` (wildcards mean loopback). */
export function connectHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}

/** Service addresses from env (*_ADDR, PORT, HOST) with the local defaults. Throws on a PORT that is not a port. */
export function stackAddrs(env: NodeJS.ProcessEnv = process.env): StackAddrs & { host: string; port: number } {
  const host = env.HOST || "127.0.0.1";
  const port = Number(env.PORT || 8080);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`PORT=${env.PORT} is not a port number`);
  return {
    ...readAddrs(env),
    gateway: `${host.includes(":") ? `[${host}]` : host}:${port}`,
    host,
    port,
  };
}

/**
 * The environment of a stack on fresh loopback ports: every service's *_ADDR, the gateway's
 * PORT and HOST. Passed in `startStack`'s env, several stacks run side by side (tests, bench).
 */
export async function freeStackEnv(): Promise<Record<string, string>> {
  const addr = async () => `127.0.0.1:${await freePort()}`;
  return {
    DOCUMENTS_ADDR: await addr(),
    SESSIONS_ADDR: await addr(),
    AGENT_ADDR: await addr(),
    BILLING_ADDR: await addr(),
    INGEST_ADDR: await addr(),
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
  };
}
