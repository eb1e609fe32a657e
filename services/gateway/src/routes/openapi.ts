// GET /openapi.json (no auth): the OpenAPI 3.1 document of the routes, built once.
import { z } from "zod";
import { buildOpenApi } from "../openapi.js";
import { defineRoute, type Route } from "../route-registry.js";

/** Version of the interface spec the gateway implements. */
export const API_VERSION = "2.0.0";

const OpenApiDocumentSchema = z.object({ openapi: z.string() }).catchall(z.unknown());

/** The /openapi.json route documenting `routes` and itself. */
export function openApiRoute(routes: Route[]): Route {
  let doc: Record<string, unknown> | undefined;
  const self: Route = defineRoute({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "OpenAPI document",
    tags: ["meta"],
    auth: false,
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
