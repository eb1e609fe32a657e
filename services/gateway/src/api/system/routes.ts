// Public routes without the API key: GET /health (every backing service SERVING) and
// GET /openapi.json (this API, built from the route registry).
import { healthV1 } from "@redline/grpc-stubs";
import { runHealthChecks } from "@redline/service-kit";
import { z } from "zod";
import { SERVICE_NAMES } from "../../context.js";
import { buildOpenApi } from "../../openapi.js";
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, endpoint } from "../shared/routes.js";
import { HealthResponseSchema } from "./schemas.js";

/** Deadline of each service's health check. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

/** 200 `{status: "healthy"}`, or 503 `{status: "unhealthy", failing: [service, ...]}`. */
export const healthRoute = defineRoute({
  ...endpoint("GET /health", "health", "Service health", "health"),
  ...answers(HealthResponseSchema, "Every service reports SERVING.", [
    { status: 503, description: "At least one service is not serving.", schema: HealthResponseSchema },
  ]),
  async handle(_input, call) {
    const checks = Object.fromEntries(
      SERVICE_NAMES.map((name) => [
        name,
        async () => {
          const res = await call.ctx.health[name].check(
            { service: "" },
            { requestId: call.requestId, timeoutMs: HEALTH_CHECK_TIMEOUT_MS },
          );
          if (res.status !== healthV1.HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} not serving`);
        },
      ]),
    );
    const failing = await runHealthChecks(checks);
    if (failing.length === 0) return { body: { status: "healthy" as const } };
    call.log.warn({ failing }, "health check failed");
    return { status: 503, body: { status: "unhealthy" as const, failing: [...failing].sort() } };
  },
});

/** Version of the interface spec the gateway implements. */
export const API_VERSION = "2.0.0";

const OpenApiDocumentSchema = z.object({ openapi: z.string() }).catchall(z.unknown());

/** The /openapi.json route documenting `routes` and itself. */
export function openApiRoute(routes: Route[]): Route {
  let doc: Record<string, unknown> | undefined;
  const self: Route = defineRoute({
    ...endpoint("GET /openapi.json", "openapi", "OpenAPI document", "meta"),
    response: { description: "This API as an OpenAPI 3.1 document.", schema: OpenApiDocumentSchema },
    async handle() {
      doc ??= buildOpenApi([...routes, self], {
        title: "Redline API",
        version: API_VERSION,
        description: "Self-hostable AI document editing. Authenticate with Authorization: Bearer <API_KEY>.",
      });
      return { body: doc as z.output<typeof OpenApiDocumentSchema> };
    },
  });
  return self;
}

/** The system routes, in documentation order (api/index.ts mounts every area's list). */
export const systemRoutes: Route[] = [healthRoute];
