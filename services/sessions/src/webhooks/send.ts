// One delivery attempt over HTTP: POST the body, signed per Standard Webhooks, to the address the
// guard checked (a `lookup` that answers it, so the host is never resolved again), no redirects
// followed, bounded by a timeout from connect to the last byte of the response.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import type { CheckedTarget } from "./address-guard.js";

/** What one attempt got: a status code, or the error that prevented one. */
export type AttemptOutcome = { status: number } | { error: string };

/** Bytes of the response body read (then dropped): receivers are not ours to buffer. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the delivery's id, the same on every
 * retry), `webhook-timestamp` (seconds, this attempt's) and `webhook-signature` (`v1,<base64>`
 * HMAC-SHA256 of `id.timestamp.body` with the endpoint's whsec_ secret).
 */
export function signatureHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

/** A lookup that answers the checked address whatever it is asked (Node asks with `all` under autoSelectFamily). */
function pinnedLookup(target: CheckedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

/** POSTs `body` with `headers` to `target`; resolves with the status or the error, never rejects. */
export function postWebhook(
  target: CheckedTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<AttemptOutcome> {
  const client = target.url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = client.request(
      target.url,
      {
        method: "POST",
        lookup: pinnedLookup(target),
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "Redline-Webhooks/1",
        },
        agent: false,
      },
      (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on("close", () => done({ status: res.statusCode ?? 0 }));
        res.on("error", () => done({ status: res.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (err) => done({ error: err.message.slice(0, 500) }));
    req.end(body);
  });
}
