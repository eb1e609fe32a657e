// Every request field the OpenAPI document describes is bounded: strings carry maxLength and
// integers a maximum no larger than their proto type allows, so oversized input is a 422 before
// any write (the hostile-input sweep found an unbounded memory key failing after billing).
import { describe, expect, it } from "vitest";
import { apiRoutes } from "./api/index.js";
import { INT64_JSON_MAX } from "./api/shared/schemas.js";
import { buildOpenApi } from "./openapi.js";

type Json = Record<string, unknown>;

const doc = buildOpenApi(apiRoutes(), { title: "t", version: "0" }) as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

/** Every unbounded leaf under `schema` as a JSON-pointer-like path. */
function unbounded(schema: unknown, at: string, seen = new Set<string>()): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const s = schema as Json;
  if (typeof s.$ref === "string") {
    if (seen.has(s.$ref)) return [];
    const id = s.$ref.split("/").pop() as string;
    return unbounded(doc.components.schemas[id], `${at}→${id}`, new Set([...seen, s.$ref]));
  }
  const out: string[] = [];
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const constrained = "enum" in s || "const" in s || s.format === "binary" || "pattern" in s;
  if (types.includes("string") && !constrained && typeof s.maxLength !== "number") out.push(`${at} (string)`);
  if (types.includes("integer") && !(typeof s.maximum === "number" && s.maximum <= INT64_JSON_MAX)) {
    out.push(`${at} (integer)`);
  }
  if (types.includes("number") && typeof s.maximum !== "number") out.push(`${at} (number)`);
  if (types.includes("array") && typeof s.maxItems !== "number") out.push(`${at} (array)`);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    for (const [i, sub] of ((s[key] as unknown[]) ?? []).entries())
      out.push(...unbounded(sub, `${at}/${key}/${i}`, seen));
  }
  for (const [name, sub] of Object.entries((s.properties as Json) ?? {}))
    out.push(...unbounded(sub, `${at}.${name}`, seen));
  if (s.items) out.push(...unbounded(s.items, `${at}[]`, seen));
  if (typeof s.additionalProperties === "object") out.push(...unbounded(s.additionalProperties, `${at}{}`, seen));
  return out;
}

describe("request bounds in /openapi.json", () => {
  it("gives every string, integer, number and list of every request a bound", () => {
    const found: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const p of (op.parameters as Json[] | undefined) ?? []) {
          found.push(...unbounded(p.schema, `${where} ${p.in}:${p.name}`));
        }
        const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
        for (const [type, media] of Object.entries(content)) found.push(...unbounded(media.schema, `${where} ${type}`));
      }
    }
    expect(found).toEqual([]);
  });

  it("bounds turn_index and offset to int32 (their proto type)", () => {
    const revert = doc.components.schemas.RevertRequest as { properties: Record<string, Json> };
    expect(revert.properties.turn_index.maximum).toBe(2 ** 31 - 1);
    const list = doc.paths["/v1/documents"].get.parameters as { name: string; schema: Json }[];
    expect(list.find((p) => p.name === "offset")?.schema.maximum).toBe(2 ** 31 - 1);
  });
});
