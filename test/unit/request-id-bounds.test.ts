import { describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { openApiDocument } from "#shared/openapi.ts";

type Schema = {
  $ref?: string;
  type?: string | string[];
  maxLength?: number;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
};

const document = openApiDocument(routeList) as unknown as {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
};

/** Every string property named `id` or `*_id` a request body can hold, with its path and maxLength. */
function idFields(
  schema: Schema,
  at: string,
  seen = new Set<Schema>(),
): { at: string; maxLength?: number }[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  if (schema.$ref) {
    const target = document.components?.schemas?.[schema.$ref.split("/").pop() as string];
    return target ? idFields(target, at, seen) : [];
  }
  const found: { at: string; maxLength?: number }[] = [];
  for (const part of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    found.push(...idFields(part, at, seen));
  if (schema.items) found.push(...idFields(schema.items, `${at}[]`, seen));
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = [property.type ?? []].flat();
    if ((name === "id" || name.endsWith("_id")) && types.includes("string"))
      found.push({ at: `${at}.${name}`, maxLength: property.maxLength });
    found.push(...idFields(property, `${at}.${name}`, seen));
  }
  return found;
}

/** A token's requested id may be an expression (≤ 4096 characters): what it renders to is bounded (idError). */
const RENDERED_IDS = ["POST /tokens body.id", "POST /tokenize body.id"];

describe("ids in request bodies", () => {
  // An id reaches a store key (DynamoDB refuses keys over 2 KB with a 500-shaped error): every one is bounded
  // at the edge, whatever the route (the fuzz found PATCH /proxies/{id} taking a 1 MB application.id).
  it("are bounded strings on every route", () => {
    const fields = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        Object.values(operation.requestBody?.content ?? {}).flatMap((content) =>
          idFields(content.schema, `${method.toUpperCase()} ${path} body`),
        ),
      ),
    );
    expect(fields.length).toBeGreaterThan(5);
    const unbounded = fields.filter((field) => field.maxLength === undefined || field.maxLength > 400);
    expect(unbounded.map((field) => field.at)).toEqual(RENDERED_IDS);
  });
});
