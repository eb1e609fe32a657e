// The gateway as a library: startGateway builds the context and app from a config and listens;
// tests boot it in-process on port 0.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "./app.js";
import type { GatewayConfig } from "./config.js";
import { createContext, type GatewayContext } from "./context.js";
import { onClientError } from "./error-handler.js";

/** A running gateway. */
export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8080 (no trailing slash). */
  url: string;
  port: number;
  /** Stops accepting requests, waits up to 10 s for those in flight, then closes the gRPC clients. */
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 10_000;

/** Starts the HTTP gateway on cfg.host:cfg.port; `overrides` replace context members (tests). */
export async function startGateway(
  cfg: GatewayConfig,
  overrides: Partial<GatewayContext> = {},
): Promise<RunningGateway> {
  const ctx = createContext(cfg, overrides);
  const server = createServer(createApp(ctx, cfg));
  server.on("clientError", onClientError);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(cfg.port, cfg.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    ctx.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${port}`;
  ctx.log.info({ url, port }, "listening");
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          ctx.close();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
