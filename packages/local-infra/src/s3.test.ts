// The embedded S3 (s3rver-main.cjs): generated per-data-dir credentials, and no anonymous access.
// Signed requests (minio client, pre-signed links) are covered in test/object-store-security.test.ts.
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EmbeddedS3Handle, s3Credentials, startS3 } from "./s3.js";
import { testCleanups } from "./test-support.js";

const { cleanups, tempDir } = testCleanups("redline-s3test-");

async function started(opts: Parameters<typeof startS3>[0]): Promise<EmbeddedS3Handle> {
  const s3 = await startS3(opts);
  cleanups.push(() => s3.stop());
  return s3;
}

async function expectAccessDenied(res: Response): Promise<void> {
  expect(res.status).toBe(403);
  expect(res.headers.get("content-type")).toMatch(/application\/xml/);
  expect(await res.text()).toContain("<Code>AccessDenied</Code>");
}

describe("s3Credentials", () => {
  it("generates a random pair once per data dir, stores it 0600 and reads it back", () => {
    const dir = tempDir();
    const first = s3Credentials(dir);
    expect(first.accessKey).toMatch(/^RL[0-9A-F]{18}$/);
    expect(first.secretKey).toMatch(/^[A-Za-z0-9_-]{40}$/);
    expect(statSync(join(dir, ".credentials.json")).mode & 0o777).toBe(0o600);
    expect(s3Credentials(dir)).toEqual(first);
    expect(s3Credentials(tempDir())).not.toEqual(first);
  });

  it("says how to recover from a damaged credentials file", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".credentials.json"), "{not json");
    expect(() => s3Credentials(dir)).toThrow(/delete it to generate new ones/);
    writeFileSync(join(dir, ".credentials.json"), "{}");
    expect(() => s3Credentials(dir)).toThrow(/lacks accessKey\/secretKey/);
  });
});

describe("startS3", () => {
  it("uses the data dir's generated pair, the same across restarts", async () => {
    const dir = tempDir();
    const first = await started({ dataDir: dir });
    expect(first.accessKey).not.toBe("S3RVER");
    await first.stop();
    const second = await started({ dataDir: dir });
    expect({ a: second.accessKey, s: second.secretKey }).toEqual({ a: first.accessKey, s: first.secretKey });
    expect(JSON.parse(readFileSync(join(dir, ".credentials.json"), "utf8")).accessKey).toBe(first.accessKey);
    // The secret travels in the child's environment, not its world-readable command line.
    const pid = readFileSync(join(dir, ".s3rver.pid"), "utf8").trim();
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(second.secretKey);
  });

  it("takes an explicit pair, and refuses s3rver's public default or half a pair", async () => {
    const s3 = await started({ dataDir: tempDir(), accessKey: "AKEXPLICIT", secretKey: "explicit-secret-123" });
    expect(s3.accessKey).toBe("AKEXPLICIT");
    await expect(startS3({ dataDir: tempDir(), accessKey: "S3RVER", secretKey: "S3RVER" })).rejects.toThrow(
      /public default key pair/,
    );
    await expect(startS3({ dataDir: tempDir(), accessKey: "AK" })).rejects.toThrow(
      /both S3_ACCESS_KEY and S3_SECRET_KEY/,
    );
  });

  it("refuses unsigned requests with 403 AccessDenied: list, get, put, delete, bucket list", async () => {
    const s3 = await started({ dataDir: tempDir() });
    const base = `${s3.endpoint}/${s3.bucket}`;
    await expectAccessDenied(await fetch(s3.endpoint));
    await expectAccessDenied(await fetch(base));
    await expectAccessDenied(await fetch(`${base}?list-type=2`));
    await expectAccessDenied(await fetch(`${base}/some/key`));
    await expectAccessDenied(await fetch(`${base}/some/key`, { method: "PUT", body: "<script>1</script>" }));
    await expectAccessDenied(await fetch(`${base}/some/key`, { method: "DELETE" }));
    await expectAccessDenied(await fetch(`${s3.endpoint}/other-bucket`, { method: "PUT" }));
    // A signature without the algorithm s3rver keys its check on would slip through as anonymous.
    await expectAccessDenied(await fetch(`${base}/some/key?X-Amz-Signature=${"0".repeat(64)}`));
    await expectAccessDenied(await fetch(`${base}/some/key?X-Amz-Algorithm=AWS4-HMAC-SHA256`));
    // The credentials file sits next to the buckets but is no object.
    await expectAccessDenied(await fetch(`${s3.endpoint}/.credentials.json`));
  });

  it("verifies signatures that are present: a made-up one is refused with 403", async () => {
    const s3 = await started({ dataDir: tempDir() });
    const date = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
    const query = new URLSearchParams({
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": `${s3.accessKey}/${date.slice(0, 8)}/us-east-1/s3/aws4_request`,
      "X-Amz-Date": date,
      "X-Amz-Expires": "300",
      "X-Amz-SignedHeaders": "host",
      "X-Amz-Signature": "f".repeat(64),
    });
    const res = await fetch(`${s3.endpoint}/${s3.bucket}?${query}`);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    const legacy = await fetch(`${s3.endpoint}/${s3.bucket}/k?AWSAccessKeyId=S3RVER&Expires=9999999999&Signature=x`);
    expect(legacy.status).toBe(403);
    expect(await legacy.text()).toContain("<Code>InvalidAccessKeyId</Code>");
  });
});
