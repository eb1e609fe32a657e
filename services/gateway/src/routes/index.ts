// Every API route of the gateway, in documentation order. Adding a route here mounts it and
// adds its OpenAPI entry.
import type { Route } from "../route-registry.js";
import { chatRoute } from "./chat.js";
import { healthRoute } from "./health.js";
import { listSessionsRoute, sessionHistoryRoute } from "./sessions.js";

/** The routes createApp mounts (besides /openapi.json, which documents them). */
export function apiRoutes(): Route[] {
  return [chatRoute, listSessionsRoute, sessionHistoryRoute, healthRoute];
}
