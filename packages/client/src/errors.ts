// The one error every helper throws for a non-2xx answer, read from the spec's error bodies
// (interface-spec.md, Errors; unshown-parts.md): `{detail: string, code?}`, the 422
// `{detail: [{type, loc, msg}]}`, the 413 `{detail, error_code, ...}` and the export 413 whose
// `detail` is an object carrying `error_code`.

/** A non-2xx answer of the Redline API. */
export class RedlineApiError extends Error {
  override readonly name = "RedlineApiError";
  /** HTTP status. */
  readonly status: number;
  /**
   * The machine-readable code of the body: `code` (e.g. `quota_exhausted`, `document_in_use`),
   * else `error_code` (413 `request_too_large`, export 413 `document_too_large` inside `detail`),
   * else the first validation item's `type` of a 422; null when the body names none.
   */
  readonly code: string | null;
  /** The parsed JSON body, or the text when it is not JSON (a proxy's HTML page), or null. */
  readonly body: unknown;
  /** The response headers (Retry-After, X-Usage-*, RateLimit, ...). */
  readonly headers: Headers;

  constructor(status: number, body: unknown, headers: Headers, message?: string) {
    super(message ?? messageOf(status, body));
    this.status = status;
    this.code = codeOf(body);
    this.body = body;
    this.headers = headers;
  }

  /** Seconds the server asks to wait (Retry-After), or null. */
  get retryAfterSeconds(): number | null {
    const value = this.headers.get("retry-after");
    return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function codeOf(body: unknown): string | null {
  if (!isRecord(body)) return null;
  if (typeof body.code === "string") return body.code;
  if (typeof body.error_code === "string") return body.error_code;
  const { detail } = body;
  if (isRecord(detail) && typeof detail.error_code === "string") return detail.error_code;
  if (Array.isArray(detail) && isRecord(detail[0]) && typeof detail[0].type === "string") return detail[0].type;
  return null;
}

function messageOf(status: number, body: unknown): string {
  const detail = isRecord(body) ? body.detail : undefined;
  if (typeof detail === "string") return `${status}: ${detail}`;
  if (Array.isArray(detail)) {
    const msgs = detail.map((d) =>
      isRecord(d) ? `${(d.loc as unknown[] | undefined)?.join(".") ?? ""}: ${d.msg}` : "",
    );
    return `${status}: ${msgs.join("; ")}`;
  }
  if (isRecord(detail) && typeof detail.message_user === "string") return `${status}: ${detail.message_user}`;
  if (typeof body === "string" && body.trim()) return `${status}: ${body.trim().slice(0, 200)}`;
  return `HTTP ${status}`;
}

/** Reads a failed response's body (JSON when it parses, else text) into a RedlineApiError. */
export async function errorFromResponse(response: Response): Promise<RedlineApiError> {
  let text = "";
  try {
    text = await response.text();
  } catch {
    // The connection dropped while the error body was read: the status still says what happened.
  }
  return new RedlineApiError(response.status, parseBody(text), response.headers);
}

/** JSON when the text parses as JSON, the text itself otherwise, null when empty. */
export function parseBody(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
