// The OpenAPI document GET /openapi.json serves, built without a server or a backend: the
// client package's codegen (packages/client/scripts/generate.ts) writes it and its types from here.
import { apiRoutes } from "./api/index.js";
import { OPENAPI_INFO, openApiRoute } from "./api/system/routes.js";
import { buildOpenApi } from "./openapi.js";

/**
 * The document createApp serves at /openapi.json (the same routes in the same order, the
 * /openapi.json route itself last), as the JSON value a client receives.
 */
export function openApiDocument(): Record<string, unknown> {
  const routes = apiRoutes();
  const doc = buildOpenApi([...routes, openApiRoute(routes)], OPENAPI_INFO);
  // Through JSON as res.json sends it: undefined members are left out.
  return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
}
