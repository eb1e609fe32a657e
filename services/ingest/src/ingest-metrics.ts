// Durations of conversions (upload → HTML) and exports (HTML → file) per format, so a slow
// format (pdf through Chromium, a large docx) shows as its own series.
import { histogram, METRICS_PREFIX } from "@redline/service-kit";

/** Conversions and exports run from milliseconds (txt) to the 30–60 s worker time limits. */
const BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

const conversions = histogram(
  `${METRICS_PREFIX}ingest_conversion_duration_seconds`,
  "Time to convert an upload to HTML, by source format and result (ok, error).",
  ["format", "result"],
  BUCKETS,
);
const exports = histogram(
  `${METRICS_PREFIX}ingest_export_duration_seconds`,
  "Time to build an export file, by target format and result (ok, error).",
  ["format", "result"],
  BUCKETS,
);

async function timed<T>(h: typeof conversions, format: string, work: () => Promise<T>): Promise<T> {
  const end = h.startTimer({ format });
  try {
    const out = await work();
    end({ result: "ok" });
    return out;
  } catch (err) {
    end({ result: "error" });
    throw err;
  }
}

/** Runs the conversion `work` of an upload in `format` (one of DocumentFormat), timing it. */
export function timeConversion<T>(format: string, work: () => Promise<T>): Promise<T> {
  return timed(conversions, format, work);
}

/** Runs the export `work` to `format` (one of EXPORT_FORMATS), timing it. */
export function timeExport<T>(format: string, work: () => Promise<T>): Promise<T> {
  return timed(exports, format, work);
}
