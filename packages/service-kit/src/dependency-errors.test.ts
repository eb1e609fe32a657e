// A dependency that cannot be reached is the caller's 503 (issue #10): real failures of the pg
// client, the knex pool and the minio client against a closed port, classified as unavailable;
// errors that are not about reaching the dependency are left alone.
import { freePort } from "@redline/local-infra";
import { describe, expect, it } from "vitest";
import { createDb } from "./db.js";
import { databaseUnavailable, UnavailableError } from "./errors.js";
import { createObjectStore } from "./object-store.js";

describe("databaseUnavailable", () => {
  it("classifies a refused Postgres connection as a 503 with Retry-After", async () => {
    const db = createDb(`postgres://u:p@127.0.0.1:${await freePort()}/x`, "s", 1);
    try {
      const err = await db.raw("select 1").then(
        () => null,
        (e: unknown) => e,
      );
      const mapped = databaseUnavailable(err);
      expect(mapped).toBeInstanceOf(UnavailableError);
      expect(mapped?.httpStatus).toBe(503);
      expect(mapped?.headers?.["Retry-After"]).toBe("2");
      expect(mapped?.detail).toMatch(/database is unavailable/);
    } finally {
      await db.destroy();
    }
  });

  it("classifies Postgres shutting down, a lost connection and a pool timeout; not a constraint error", () => {
    const shuttingDown = Object.assign(new Error("terminating connection due to administrator command"), {
      code: "57P01",
    });
    expect(databaseUnavailable(shuttingDown)).toBeInstanceOf(UnavailableError);
    expect(databaseUnavailable(new Error("Connection terminated unexpectedly"))).toBeInstanceOf(UnavailableError);
    const poolTimeout = Object.assign(new Error("Knex: Timeout acquiring a connection."), { name: "KnexTimeoutError" });
    expect(databaseUnavailable(poolTimeout)).toBeInstanceOf(UnavailableError);
    const wrapped = new Error("query failed", { cause: Object.assign(new Error("connect"), { code: "ECONNRESET" }) });
    expect(databaseUnavailable(wrapped)).toBeInstanceOf(UnavailableError);

    // Rolled back under contention: a retry succeeds, so the client is told to retry, not a 500.
    for (const code of ["40P01", "40001"]) {
      const mapped = databaseUnavailable(Object.assign(new Error("deadlock detected"), { code }));
      expect(mapped?.httpStatus).toBe(503);
      expect(mapped?.headers?.["Retry-After"]).toBe("1");
      expect(mapped?.detail).toMatch(/conflicted with concurrent ones/);
    }

    const unique = Object.assign(new Error("duplicate key value violates unique constraint"), { code: "23505" });
    expect(databaseUnavailable(unique)).toBeNull();
    expect(databaseUnavailable(new TypeError("x is undefined"))).toBeNull();
  });
});

describe("object store unreachable", () => {
  it("answers put and get with a 503 naming the object store", async () => {
    const store = createObjectStore({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      accessKey: "k",
      secretKey: "secret-key",
      bucket: "redline",
      region: "us-east-1",
    });
    for (const attempt of [() => store.put("a", Buffer.from("x"), "text/plain"), () => store.get("a")]) {
      const err = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as UnavailableError).detail).toMatch(/object store \(S3\) is unavailable/);
      expect((err as UnavailableError).headers?.["Retry-After"]).toBe("2");
    }
  });
});
