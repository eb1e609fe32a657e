// Published clients are typed from the spec: a field the spec types `string` must never be
// `null` on the wire (unshown-parts.md, "Fields typed `string` in the spec are never `null`";
// leave it out instead). This walks every response schema of /openapi.json — components and
// inline bodies, through properties, items, additionalProperties and allOf/anyOf/oneOf — and
// fails on a string that may be null, except the fields the spec itself documents as null.
import { describe, expect, it } from "vitest";
import { apiRoutes } from "./api/index.js";
import { buildOpenApi } from "./openapi.js";

type Json = Record<string, unknown>;

const doc = buildOpenApi(apiRoutes(), { title: "t", version: "0" }) as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

/** Nullable strings the spec documents as such, by `Component.field`. */
const SPEC_NULLABLE_STRINGS = new Set([
  // interface-spec.md, Job: "| organization_id | string or null | Null for user jobs. |"
  "Job.organization_id",
  "CancelJobResponse.organization_id", // the job plus stop_state (unshown-parts.md, Jobs)
  // interface-spec.md, Job: "| user_id | string or null | Null for organization jobs. |"
  "Job.user_id",
  "CancelJobResponse.user_id",
  // interface-spec.md, Job: "| error | string or null | Present when status is `failed`. |"
  "Job.error",
  "CancelJobResponse.error",
  // interface-spec.md, Session document roster entry:
  // "| durable_document_id | Permanent UUID. Null until the document's first save. |"
  "RosterEntry.durable_document_id", // the upload reply's roster
  "SessionRosterEntry.durable_document_id",
]);

const isNull = (s: Json) => s.type === "null" || (Array.isArray(s.type) && s.type.includes("null"));
const isString = (s: Json) => s.type === "string" || (Array.isArray(s.type) && s.type.includes("string"));

/** Every string that may be null under `schema`, as `Owner.field` (owner = nearest component). */
function nullableStrings(schema: unknown, owner: string, field: string, seen: Set<string>): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const s = schema as Json;
  if (typeof s.$ref === "string") {
    if (seen.has(s.$ref)) return [];
    const id = s.$ref.split("/").pop() as string;
    return nullableStrings(doc.components.schemas[id], id, "", new Set([...seen, s.$ref]));
  }
  const out: string[] = [];
  const here = field ? `${owner}.${field}` : owner;
  const alts = [...((s.anyOf as Json[]) ?? []), ...((s.oneOf as Json[]) ?? [])];
  const resolve = (a: Json) =>
    typeof a.$ref === "string" ? (doc.components.schemas[a.$ref.split("/").pop() as string] ?? a) : a;
  if (isString(s) && isNull(s)) out.push(here);
  else if (alts.some((a) => isString(resolve(a))) && (isNull(s) || alts.some((a) => isNull(resolve(a)))))
    out.push(here);
  for (const key of ["anyOf", "oneOf", "allOf"])
    for (const sub of (s[key] as unknown[]) ?? []) out.push(...nullableStrings(sub, owner, field, seen));
  for (const [name, sub] of Object.entries((s.properties as Json) ?? {}))
    out.push(...nullableStrings(sub, owner, field ? `${field}.${name}` : name, seen));
  if (s.items) out.push(...nullableStrings(s.items, owner, field ? `${field}[]` : "[]", seen));
  if (typeof s.additionalProperties === "object")
    out.push(...nullableStrings(s.additionalProperties, owner, field ? `${field}{}` : "{}", seen));
  return out;
}

describe("response strings in /openapi.json", () => {
  it("never types a string field as nullable unless the spec does", () => {
    const found = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [status, response] of Object.entries((op.responses as Record<string, Json>) ?? {})) {
          const content = (response.content ?? {}) as Record<string, Json>;
          for (const media of Object.values(content)) {
            const at = `${method.toUpperCase()} ${path} ${status}`;
            for (const f of nullableStrings(media.schema, at, "", new Set())) found.add(f);
          }
        }
      }
    }
    const unexpected = [...found].filter((f) => !SPEC_NULLABLE_STRINGS.has(f)).sort();
    expect(unexpected).toEqual([]);
  });
});
