// The CLI's exit codes and the errors that choose them (documented in `redline --help` and the
// package README): 0 ok, 2 usage, 3 quota or rate limit (HTTP 429), 4 API error, 130 interrupted.
import { RedlineApiError } from "@redline/client";

/** Exit codes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, quota: 3, api: 4, interrupted: 130 } as const;

/** A mistake in the command line (or a missing key or file): exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The job ended without a result (failed, or cancelled elsewhere): exit 4. */
export class JobError extends Error {
  override name = "JobError";
  constructor(
    message: string,
    readonly jobId: string,
    readonly status: string,
  ) {
    super(message);
  }
}

/** The user pressed Ctrl-C: the running job was cancelled; exit 130. */
export class InterruptedError extends Error {
  override name = "InterruptedError";
  constructor(readonly jobId?: string) {
    super(jobId ? `Interrupted: job ${jobId} cancelled` : "Interrupted");
  }
}

/** The exit code for an error a command threw. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof InterruptedError) return EXIT.interrupted;
  if (err instanceof RedlineApiError) return err.status === 429 ? EXIT.quota : EXIT.api;
  if (err instanceof JobError) return EXIT.api;
  if (isUnreachable(err)) return EXIT.api;
  return EXIT.failure;
}

/** One line (or a few) saying what went wrong, for stderr. */
export function describeError(err: unknown): string {
  if (err instanceof RedlineApiError) {
    const retry = err.status === 429 ? retryAfter(err) : "";
    return `API error ${err.status}${err.code ? ` (${err.code})` : ""}: ${detailText(err.body) || err.message}${retry}`;
  }
  if (isUnreachable(err)) return `Cannot reach the Redline API: ${causeMessage(err)}`;
  return err instanceof Error ? err.message : String(err);
}

/** The spec's error detail as text: a string, a validation list (`loc: msg`), or an object's message_user. */
function detailText(body: unknown): string {
  if (!body || typeof body !== "object") return typeof body === "string" ? body : "";
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail))
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join(".")}: ${d.msg ?? ""}`)
      .join("; ");
  if (detail && typeof detail === "object") {
    const d = detail as { message_user?: string; error_code?: string };
    return d.message_user ?? d.error_code ?? JSON.stringify(detail);
  }
  return "";
}

function retryAfter(err: RedlineApiError): string {
  const headers = err.headers as Headers | Record<string, string> | undefined;
  const value = headers instanceof Headers ? headers.get("retry-after") : headers?.["retry-after"];
  return value ? ` (retry after ${value} s)` : "";
}

/** fetch's network failure (TypeError "fetch failed" with a cause such as ECONNREFUSED). */
function isUnreachable(err: unknown): boolean {
  return err instanceof TypeError && err.message === "fetch failed";
}

function causeMessage(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? String(err);
}
