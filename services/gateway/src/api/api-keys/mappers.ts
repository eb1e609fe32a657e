// accounts.v1 key messages → the ApiKey and CreatedApiKey JSON.
import type { accountsV1 } from "@redline/grpc-stubs";
import { required } from "@redline/service-kit";
import { iso } from "../shared/mappers.js";
import type { ApiKeyJson, CreatedApiKeyJson } from "./schemas.js";

/** A listed key: name, organization_id and last_used_at left out when they have no value. */
export function apiKeyToJson(key: accountsV1.ApiKeyInfo): ApiKeyJson {
  const lastUsedAt = iso(key.lastUsedAt);
  return {
    id: key.id,
    ...(key.name && { name: key.name }),
    prefix: key.prefix,
    read_only: key.readOnly,
    created_at: required(iso(key.createdAt), "created_at"),
    ...(key.organizationId && { organization_id: key.organizationId }),
    ...(lastUsedAt && { last_used_at: lastUsedAt }),
  };
}

/** A created key with the key itself (never used yet, so no last_used_at). */
export function createdApiKeyToJson(created: accountsV1.CreatedApiKey): CreatedApiKeyJson {
  const { last_used_at: _never, ...key } = apiKeyToJson(required(created.key, "key"));
  return { ...key, key: created.apiKey };
}
