// GET /health.
import { z } from "zod";
import { component } from "../shared/schemas.js";

/** GET /health. */
export const HealthResponseSchema = component("HealthResponse", {
  status: z.enum(["healthy", "unhealthy"]),
  failing: z.array(z.string()).optional().meta({ description: "Services that did not report SERVING." }),
});

export type HealthResponseJson = z.output<typeof HealthResponseSchema>;
