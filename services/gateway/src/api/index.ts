// Every API route of the gateway: each feature area lists its routes in api/<area>/routes.ts
// (with its schemas and mappers beside it); this file only orders the areas. Adding a route to an
// area's list mounts it and adds its OpenAPI entry.
import type { Route } from "../route-registry.js";
import { agentsRoutes } from "./agents/routes.js";
import { apiKeysRoutes } from "./api-keys/routes.js";
import { attachmentsRoutes } from "./attachments/routes.js";
import { chatRoutes } from "./chat/routes.js";
import { documentsRoutes } from "./documents/routes.js";
import { exportsRoutes } from "./exports/routes.js";
import { invitationsRoutes } from "./invitations/routes.js";
import { jobsRoutes } from "./jobs/routes.js";
import { mcpRoutes } from "./mcp/routes.js";
import { organizationsRoutes } from "./organizations/routes.js";
import { promotionsRoutes } from "./promotions/routes.js";
import { rosterRoutes } from "./roster/routes.js";
import { sessionsRoutes } from "./sessions/routes.js";
import { systemRoutes } from "./system/routes.js";
import { templatesRoutes } from "./templates/routes.js";
import { uploadsRoutes } from "./uploads/routes.js";
import { usageRoutes } from "./usage/routes.js";
import { usersRoutes } from "./users/routes.js";
import { webhooksRoutes } from "./webhooks/routes.js";

/**
 * The routes createApp mounts (besides /openapi.json, which documents them), area by area.
 * Fixed /v1/documents/<verb> paths (uploads, exports, attachments) come before any
 * /v1/documents/{document_id} route.
 */
export function apiRoutes(): Route[] {
  return [
    ...uploadsRoutes,
    ...exportsRoutes,
    ...attachmentsRoutes,
    ...templatesRoutes,
    ...chatRoutes,
    ...jobsRoutes,
    ...sessionsRoutes,
    ...documentsRoutes,
    ...rosterRoutes,
    ...usersRoutes,
    ...usageRoutes,
    ...promotionsRoutes,
    ...apiKeysRoutes,
    ...organizationsRoutes,
    ...invitationsRoutes,
    ...agentsRoutes,
    ...mcpRoutes,
    ...webhooksRoutes,
    ...systemRoutes,
  ];
}
