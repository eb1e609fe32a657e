// Reservation outcomes: how often a turn gets its operations, and how often the quota stops it.
import { counter, METRICS_PREFIX, QuotaExceededError } from "@redline/service-kit";

const reservations = counter(
  `${METRICS_PREFIX}billing_reservations_total`,
  "ReserveOperations outcomes: reserved (held, or an idempotent repeat), quota_exceeded (429), error.",
  ["result"],
);

/** Runs the reservation `reserve` and counts its outcome in redline_billing_reservations_total{result}. */
export async function countReservation<T>(reserve: () => Promise<T>): Promise<T> {
  try {
    const out = await reserve();
    reservations.inc({ result: "reserved" });
    return out;
  } catch (err) {
    reservations.inc({ result: err instanceof QuotaExceededError ? "quota_exceeded" : "error" });
    throw err;
  }
}
