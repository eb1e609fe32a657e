// One pino logger per service; children are named per component. Credentials never reach logs.
import { type Logger, pino } from "pino";

export type { Logger };

/** Creates the service's root logger; level from `level` (default info), JSON to stdout. */
export function createLogger(name: string, level = "info"): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ["authorization", "headers.authorization", "req.headers.authorization", "apiKey", "api_key", "*.apiKey"],
      censor: "[redacted]",
    },
  });
}
