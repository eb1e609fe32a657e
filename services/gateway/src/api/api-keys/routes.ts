// The caller's own API keys: POST, GET /v1/api-keys and DELETE /v1/api-keys/{key_id}. These are
// the personal keys of the API key's user (whatever key calls); organization keys are managed
// under /v1/organizations/{id}/api-keys. Another user's key is a 404, never a 403.
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, endpoint } from "../shared/routes.js";
import { apiKeyToJson, createdApiKeyToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** POST /v1/api-keys `{name?, read_only?}` → the key, shown once. */
export const createApiKeyRoute = defineRoute({
  ...endpoint("POST /v1/api-keys", "createApiKey", "Create an API key", "api-keys"),
  description:
    "Creates a personal key of the caller's user. The `key` is in this response only; it is stored hashed. " +
    "A read-only key may only make GET and HEAD requests.",
  request: { body: schemas.CreateApiKeySchema },
  ...answers(schemas.CreatedApiKeySchema, { status: 201, description: "The new key, shown once." }, [403, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.accounts.createOwnApiKey(
      { name: body.name ?? "", readOnly: body.read_only },
      call.rpc(),
    );
    return { status: 201, body: createdApiKeyToJson(res) };
  },
});

/** GET /v1/api-keys → `{api_keys}` without the keys themselves. */
export const listApiKeysRoute = defineRoute({
  ...endpoint("GET /v1/api-keys", "listApiKeys", "List your API keys", "api-keys"),
  description: "The caller's user's active personal keys, newest first: prefix, never the key.",
  ...answers(schemas.ApiKeyListSchema, "The keys.", [503]),
  async handle(_input, call) {
    const res = await call.ctx.accounts.listOwnApiKeys({}, call.rpc());
    return { body: { api_keys: res.keys.map(apiKeyToJson) } };
  },
});

/** DELETE /v1/api-keys/{key_id}: revokes one of the caller's keys. */
export const revokeApiKeyRoute = defineRoute({
  ...endpoint("DELETE /v1/api-keys/{key_id}", "revokeApiKey", "Revoke an API key", "api-keys"),
  description:
    "Revokes one of the caller's personal keys; it is refused from then on (within the gateway's short auth cache). " +
    "An unknown, already revoked or someone else's key is a 404.",
  request: { params: schemas.ApiKeyPathSchema },
  ...answers(schemas.ApiKeyRevokedSchema, "Revoked.", [403, 404, 503]),
  async handle({ params }, call) {
    await call.ctx.accounts.revokeOwnApiKey({ id: params.key_id }, call.rpc());
    return { body: { id: params.key_id, revoked: true as const } };
  },
});

/** The api-keys routes, in documentation order (api/index.ts mounts every area's list). */
export const apiKeysRoutes: Route[] = [createApiKeyRoute, listApiKeysRoute, revokeApiKeyRoute];
