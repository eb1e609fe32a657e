// One pino logger per service; children are named per component. Credentials never reach logs.
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

/**
 * Creates the service's root logger; level from `level` (default info), JSON to stdout (or
 * `destination`, tests). Request loggers (CallContext.log, the gateway's) bind the trace_id and
 * span_id of their span when tracing is on.
 */
export function createLogger(name: string, level = "info", destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: {
      paths: ["authorization", "headers.authorization", "req.headers.authorization", "apiKey", "api_key", "*.apiKey"],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
