// S3-compatible object storage through the minio client (MinIO, s3rver or AWS S3).
import { Client } from "minio";

/** Where the bucket lives. `endpoint` is a URL such as http://127.0.0.1:49329. */
export interface S3Config {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
}

/** A client bound to one bucket. */
export interface ObjectStore {
  client: Client;
  bucket: string;
  /** Creates the bucket when missing. */
  ensureBucket(): Promise<void>;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Health probe. */
  ping(): Promise<void>;
}

/** Builds an object store client from config (path-style addressing, as s3rver and MinIO need). */
export function createObjectStore(cfg: S3Config): ObjectStore {
  const url = new URL(cfg.endpoint);
  const useSSL = url.protocol === "https:";
  const client = new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: cfg.accessKey,
    secretKey: cfg.secretKey,
    region: cfg.region,
    pathStyle: true,
  });
  return {
    client,
    bucket: cfg.bucket,
    async ensureBucket() {
      if (!(await client.bucketExists(cfg.bucket))) await client.makeBucket(cfg.bucket, cfg.region);
    },
    async put(key, body, contentType) {
      await client.putObject(cfg.bucket, key, body, body.length, { "Content-Type": contentType });
    },
    async get(key) {
      const stream = await client.getObject(cfg.bucket, key);
      const parts: Buffer[] = [];
      for await (const part of stream) parts.push(part as Buffer);
      return Buffer.concat(parts);
    },
    async ping() {
      await client.bucketExists(cfg.bucket);
    },
  };
}
