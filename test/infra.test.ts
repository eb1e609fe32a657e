// The shared test infrastructure from test/global-setup.ts works for what services need:
// Postgres with per-file databases, JetStream with msgID dedup, S3 through the minio client.
import { randomBytes } from "node:crypto";
import { createDatabase, createTestDatabase, dropDatabase } from "@redline/local-infra";
import { Client as MinioClient } from "minio";
import { AckPolicy, connect, type NatsConnection, nanos, StringCodec } from "nats";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";

const infra = inject("infra");

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe("postgres", () => {
  it("answers select 1 on the admin URL", async () => {
    const rows = await query<{ one: number }>(infra.databaseUrl, "select 1 as one");
    expect(rows).toEqual([{ one: 1 }]);
  });

  it("creates a separate database per test file, usable right away", async () => {
    const a = await createTestDatabase(infra.databaseUrl, "infra.test");
    const b = await createTestDatabase(infra.databaseUrl, "infra.test");
    expect(a).not.toBe(b);
    const nameA = new URL(a).pathname.slice(1);
    expect(nameA).toMatch(/^infra_test_[0-9a-f]{10}$/);

    await query(a, "create table t (v text)");
    await query(a, "insert into t values ($1)", ["é ☃ 日本"]);
    expect(await query(a, "select v from t")).toEqual([{ v: "é ☃ 日本" }]);
    // b is another database: no table t there.
    await expect(query(b, "select v from t")).rejects.toThrow(/does not exist/);
    const [{ db }] = await query<{ db: string }>(a, "select current_database() as db");
    expect(db).toBe(nameA);

    // UTF-8 with Unicode-aware case mapping, independent of the OS locales.
    const [{ enc, up }] = await query<{ enc: string; up: string }>(
      a,
      "select pg_encoding_to_char(encoding) as enc, upper('é') as up from pg_database where datname = current_database()",
    );
    expect(enc).toBe("UTF8");
    expect(up).toBe("É");

    await dropDatabase(infra.databaseUrl, nameA);
    await dropDatabase(infra.databaseUrl, new URL(b).pathname.slice(1));
  });

  it("createDatabase is idempotent and safe to race", async () => {
    const name = `race_${randomBytes(4).toString("hex")}`;
    const urls = await Promise.all([1, 2, 3, 4].map(() => createDatabase(infra.databaseUrl, name)));
    expect(new Set(urls).size).toBe(1);
    expect(await query(urls[0], "select 1 as ok")).toEqual([{ ok: 1 }]);
    await dropDatabase(infra.databaseUrl, name);
  });
});

describe("nats jetstream", () => {
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await nc?.drain();
  });

  it("deduplicates publishes with the same msgID", async () => {
    nc = await connect({ servers: infra.natsUrl });
    const jsm = await nc.jetstreamManager();
    const stream = `INFRA_TEST_${randomBytes(4).toString("hex")}`;
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], duplicate_window: nanos(60_000) });
    try {
      const js = nc.jetstream();
      const sc = StringCodec();
      const first = await js.publish(`${stream}.doc`, sc.encode("hello"), { msgID: "op-1" });
      const second = await js.publish(`${stream}.doc`, sc.encode("hello"), { msgID: "op-1" });
      const third = await js.publish(`${stream}.doc`, sc.encode("world"), { msgID: "op-2" });
      expect(first.duplicate).toBe(false);
      expect(second.duplicate).toBe(true);
      expect(second.seq).toBe(first.seq);
      expect(third.duplicate).toBe(false);
      const info = await jsm.streams.info(stream);
      expect(info.state.messages).toBe(2);

      // A durable consumer reads both stored messages.
      await jsm.consumers.add(stream, { durable_name: "reader", ack_policy: AckPolicy.Explicit });
      const consumer = await js.consumers.get(stream, "reader");
      const batch = await consumer.fetch({ max_messages: 2, expires: 5_000 });
      const got: string[] = [];
      for await (const m of batch) {
        got.push(sc.decode(m.data));
        m.ack();
      }
      expect(got).toEqual(["hello", "world"]);
    } finally {
      await jsm.streams.delete(stream);
    }
  });
});

describe("s3", () => {
  const url = new URL(infra.s3.endpoint);
  const client = (secretKey = infra.s3.secretKey) =>
    new MinioClient({
      endPoint: url.hostname,
      port: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
      useSSL: url.protocol === "https:",
      accessKey: infra.s3.accessKey,
      secretKey,
      region: infra.s3.region,
      pathStyle: true,
    });

  it("has the bucket, and puts, stats, gets and removes an object", async () => {
    const s3 = client();
    expect(await s3.bucketExists(infra.s3.bucket)).toBe(true);
    const key = `infra-test/${randomBytes(4).toString("hex")}/doc.html`;
    const body = Buffer.from("<p>Grüße, 世界</p>");
    await s3.putObject(infra.s3.bucket, key, body, body.length, { "Content-Type": "text/html" });

    const stat = await s3.statObject(infra.s3.bucket, key);
    expect(stat.size).toBe(body.length);
    const stream = await s3.getObject(infra.s3.bucket, key);
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    expect(Buffer.concat(parts).equals(body)).toBe(true);

    await s3.removeObject(infra.s3.bucket, key);
    await expect(s3.statObject(infra.s3.bucket, key)).rejects.toThrow();
  });

  it("rejects requests signed with the wrong secret", async () => {
    const body = Buffer.from("x");
    await expect(
      client("not-the-secret").putObject(infra.s3.bucket, "infra-test/denied", body, body.length),
    ).rejects.toMatchObject({
      code: "SignatureDoesNotMatch",
    });
    await expect(client().statObject(infra.s3.bucket, "infra-test/denied")).rejects.toThrow();
  });
});
