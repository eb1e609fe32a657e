// A service that is down (killed, restarting) is its caller's 503 (issue #10): a real gRPC call
// to a closed port ends, after the client's retries, in DependencyUnavailableError, whose message
// names the RPC for logs while the payload it passes on to another service is generic.

import { healthV1 } from "@redline/grpc-stubs";
import { freePort } from "@redline/local-infra";
import { describe, expect, it } from "vitest";
import { UnavailableError } from "./errors.js";
import { createRpcClient, DependencyUnavailableError } from "./rpc.js";

describe("a call to a service that is down", () => {
  it("is a 503 with Retry-After whose passed-on payload does not name the internal RPC", async () => {
    const client = createRpcClient(healthV1.HealthService, `127.0.0.1:${await freePort()}`);
    try {
      const err = await client.check({ service: "" }, { timeoutMs: 5_000 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DependencyUnavailableError);
      expect(err).toBeInstanceOf(UnavailableError);
      const down = err as DependencyUnavailableError;
      expect(down.message).toMatch(/grpc\.health\.v1\.Health\/Check is unavailable/);
      expect(down.toPayload()).toEqual({
        httpStatus: 503,
        detail: "Service temporarily unavailable; retry shortly",
        body: undefined,
        headers: { "Retry-After": "1" },
      });
    } finally {
      client.close();
    }
  });
});
