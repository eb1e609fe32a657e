// GET /health.
import { z } from "zod";
import { apiSchemas } from "../shared/schemas.js";

/** GET /health. */
export const HealthResponseSchema = z
  .object({
    status: z.enum(["healthy", "unhealthy"]),
    failing: z.array(z.string()).optional().meta({ description: "Services that did not report SERVING." }),
  })
  .register(apiSchemas, { id: "HealthResponse" });

export type HealthResponseJson = z.output<typeof HealthResponseSchema>;
