// Public routes without the API key: GET /health (liveness: this process serves), GET /ready
// (readiness: every backing service SERVING, which reflects their own Postgres/NATS/S3) and
// GET /openapi.json (this API, built from the route registry) and GET /asyncapi.json (the NATS
// subjects and payloads, built from @redline/event-contracts).
import { buildAsyncApi } from "@redline/event-contracts/asyncapi";
import { healthV1 } from "@redline/grpc-stubs";
import { runHealthChecks, singleFlight } from "@redline/service-kit";
import { z } from "zod";
import { type GatewayContext, SERVICE_NAMES } from "../../context.js";
import { buildOpenApi } from "../../openapi.js";
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, endpoint } from "../shared/routes.js";
import { HealthResponseSchema } from "./schemas.js";

/** Deadline of each service's health check. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

/** How long /ready reuses one round of backend checks: probes and balancers cannot amplify load. */
export const READY_CACHE_MS = 1000;

/**
 * 200 `{status: "healthy"}` from this process alone: liveness must not fail (and restart the
 * gateway) because a backend is down, and must cost nothing. While the gateway stops, the
 * server answers 503 before this route (service.ts).
 */
export const healthRoute = defineRoute({
  ...endpoint("GET /health", "health", "Gateway liveness", "health"),
  ...answers(HealthResponseSchema, "The gateway process serves requests.", [
    { status: 503, description: "The gateway is shutting down.", schema: HealthResponseSchema },
  ]),
  async handle() {
    return { body: { status: "healthy" as const } };
  },
});

/** One shared, briefly cached round of backend checks per gateway context. */
const readiness = new WeakMap<GatewayContext, () => Promise<string[]>>();

function readinessOf(ctx: GatewayContext): () => Promise<string[]> {
  let check = readiness.get(ctx);
  if (!check) {
    const checks = Object.fromEntries(
      SERVICE_NAMES.map((name) => [
        name,
        async () => {
          const res = await ctx.health[name].check({ service: "" }, { timeoutMs: HEALTH_CHECK_TIMEOUT_MS });
          if (res.status !== healthV1.HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} not serving`);
        },
      ]),
    );
    check = singleFlight(async () => (await runHealthChecks(checks)).sort(), READY_CACHE_MS);
    readiness.set(ctx, check);
  }
  return check;
}

/**
 * 200 `{status: "healthy"}` when every backing service reports SERVING, else 503 `{status:
 * "unhealthy", failing: [service, ...]}`. One round of checks runs at most every
 * READY_CACHE_MS, shared by concurrent callers.
 */
export const readyRoute = defineRoute({
  ...endpoint("GET /ready", "ready", "Readiness: every backing service serving", "health"),
  ...answers(HealthResponseSchema, "Every service reports SERVING.", [
    { status: 503, description: "At least one service is not serving.", schema: HealthResponseSchema },
  ]),
  async handle(_input, call) {
    const failing = await readinessOf(call.ctx)();
    if (failing.length === 0) return { body: { status: "healthy" as const } };
    call.log.warn({ failing }, "readiness check failed");
    return { status: 503, body: { status: "unhealthy" as const, failing: [...failing] } };
  },
});

/** Version of the interface spec the gateway implements. */
export const API_VERSION = "2.0.0";

const OpenApiDocumentSchema = z.object({ openapi: z.string() }).catchall(z.unknown());

/** The `info` of the served OpenAPI document. */
export const OPENAPI_INFO = {
  title: "Redline API",
  version: API_VERSION,
  description: "Self-hostable AI document editing. Authenticate with Authorization: Bearer <API_KEY>.",
};

/** The /openapi.json route documenting `routes` and itself. */
export function openApiRoute(routes: Route[]): Route {
  let doc: Record<string, unknown> | undefined;
  const self: Route = defineRoute({
    ...endpoint("GET /openapi.json", "openapi", "OpenAPI document", "meta"),
    response: { description: "This API as an OpenAPI 3.1 document.", schema: OpenApiDocumentSchema },
    async handle() {
      doc ??= buildOpenApi([...routes, self], OPENAPI_INFO);
      return { body: doc as z.output<typeof OpenApiDocumentSchema> };
    },
  });
  return self;
}

const AsyncApiDocumentSchema = z.object({ asyncapi: z.string() }).catchall(z.unknown());

/**
 * GET /asyncapi.json: the AsyncAPI 3.0 document of the NATS subjects (job events, document
 * events) for internal consumers; built once from the contracts' own schemas.
 */
export const asyncApiRoute = defineRoute({
  ...endpoint("GET /asyncapi.json", "asyncapi", "AsyncAPI document of the NATS events", "meta"),
  response: {
    description: "Redline's NATS subjects and payloads as an AsyncAPI 3.0 document.",
    schema: AsyncApiDocumentSchema,
  },
  async handle() {
    return { body: asyncApiDocument() as z.output<typeof AsyncApiDocumentSchema> };
  },
});

let asyncApiDoc: Record<string, unknown> | undefined;
function asyncApiDocument(): Record<string, unknown> {
  asyncApiDoc ??= buildAsyncApi(API_VERSION);
  return asyncApiDoc;
}

/** The system routes, in documentation order (api/index.ts mounts every area's list). */
export const systemRoutes: Route[] = [healthRoute, readyRoute, asyncApiRoute];
