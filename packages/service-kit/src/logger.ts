// One pino logger per service; children are named per component. Credentials never reach logs.
import { type DestinationStream, type Logger, pino } from "pino";
import { NO_TRACE_FIELDS, traceLogFields } from "./tracing.js";

export type { Logger };

/**
 * Creates the service's root logger; level from `level` (default info), JSON to stdout (or
 * `destination`, tests). Lines written while a span is active carry its trace_id and span_id.
 */
export function createLogger(name: string, level = "info", destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    mixin: traceLogFields,
    // pino's default merges the line into the mixin's object; with no span that is one shared
    // empty object, so the line passes unchanged instead (nothing allocated per line when off).
    mixinMergeStrategy: (line: object, trace: object) =>
      trace === NO_TRACE_FIELDS ? line : Object.assign(trace, line),
    redact: {
      paths: ["authorization", "headers.authorization", "req.headers.authorization", "apiKey", "api_key", "*.apiKey"],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
