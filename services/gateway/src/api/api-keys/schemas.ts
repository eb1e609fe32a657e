// API keys managed over HTTP (interface-spec Authentication rule 2: keys are created in the
// account settings and can be revoked): a user's own personal keys under /v1/api-keys; the
// organization's keys reuse these shapes under /v1/organizations/{id}/api-keys.
import { z } from "zod";
import { component, MAX_ID_CHARS } from "../shared/schemas.js";

/** Longest key label (characters), as billing stores it. */
export const MAX_KEY_NAME_CHARS = 100;

/** POST /v1/api-keys and POST /v1/organizations/{id}/api-keys body. */
export const CreateApiKeySchema = component("CreateApiKeyRequest", {
  name: z
    .string()
    .trim()
    .max(MAX_KEY_NAME_CHARS)
    .nullish()
    .meta({ description: "A label to recognise the key by (at most 100 characters)." }),
  read_only: z
    .boolean()
    .default(false)
    .meta({ description: "A read-only key may only make GET and HEAD requests; any other gets 403." }),
});

const keyFields = {
  id: z.string().meta({ description: "The key's id: DELETE /v1/api-keys/{id} revokes it." }),
  name: z.string().optional().meta({ description: "The key's label; left out when it has none." }),
  prefix: z.string().meta({ description: 'The first 7 characters of the key ("sk_" + 4 hex), to recognise it.' }),
  read_only: z.boolean().meta({ description: "Only GET and HEAD requests pass with this key." }),
  created_at: z.string().meta({ format: "date-time", description: "When the key was created." }),
  organization_id: z
    .string()
    .optional()
    .meta({ description: "The organization the key acts for; left out for personal keys." }),
};

/** A key as listings show it: never the key itself. */
export const ApiKeySchema = component("ApiKey", {
  ...keyFields,
  last_used_at: z.string().optional().meta({
    format: "date-time",
    description: "When the key last authenticated a request (kept to the minute); left out when never used.",
  }),
});

export type ApiKeyJson = z.output<typeof ApiKeySchema>;

/** A key just created: the key itself, shown this once. */
export const CreatedApiKeySchema = component("CreatedApiKey", {
  ...keyFields,
  key: z.string().meta({ description: "The API key (sk_ + 32 hex). Shown only in this response: store it now." }),
});

export type CreatedApiKeyJson = z.output<typeof CreatedApiKeySchema>;

/** GET /v1/api-keys response. */
export const ApiKeyListSchema = component("ApiKeyList", {
  api_keys: z.array(ApiKeySchema).meta({ description: "Active keys, newest first." }),
});

/** DELETE response. */
export const ApiKeyRevokedSchema = component("ApiKeyRevoked", {
  id: z.string().meta({ description: "The revoked key's id." }),
  revoked: z.literal(true),
});

/** Path of /v1/api-keys/{key_id}. */
export const ApiKeyPathSchema = z.object({
  key_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The key's id." }),
});
