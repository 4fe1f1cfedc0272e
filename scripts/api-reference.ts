/**
 * docs/api-reference.md, rendered from the OpenAPI document GET /openapi.json serves (so the reference and
 * the service cannot drift: test/unit/api-reference.test.ts compares the committed file with this output).
 * Written by `npm run docs:api` (scripts/docs-api.ts).
 */

/** The parts of a JSON Schema (as zod-to-openapi writes them) that the reference shows. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  format?: string;
  pattern?: string;
  description?: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface SecurityScheme {
  in?: string;
  name?: string;
}

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: Schema }> }>;
}

export interface ApiDocument {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, SecurityScheme> };
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const anchorOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .trim()
    .replace(/ /g, "-");

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

function typeOf(schema: Schema | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return "any JSON";
  if (schema.$ref) {
    const name = schema.$ref.split("/").at(-1) ?? schema.$ref;
    return `[${name}](#${anchorOf(name)})`;
  }
  if (schema.enum) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(" \\| ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(" \\| ");
  if (schema.allOf) return schema.allOf.map(typeOf).join(" & ");
  const types = [schema.type ?? "object"].flat();
  return types
    .map((type) => {
      if (type === "array") return `array of ${typeOf(schema.items)}`;
      if (type === "object" && !schema.properties && typeof schema.additionalProperties === "object")
        return `map of ${typeOf(schema.additionalProperties)}`;
      return schema.format ? `${type} (${schema.format})` : type;
    })
    .join(" \\| ");
}

function constraintsOf(schema: Schema | undefined): string {
  if (!schema) return "";
  const parts: string[] = [];
  if (schema.minLength !== undefined) parts.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) parts.push(`max length ${schema.maxLength}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) parts.push(`pattern \`${schema.pattern}\``);
  if (schema.default !== undefined) parts.push(`default \`${JSON.stringify(schema.default)}\``);
  if (schema.description) parts.push(schema.description);
  return parts.join("; ");
}

/** One row per field; an inline object's (or array of objects') fields follow as `parent.field`. */
function fieldRows(schema: Schema, prefix: string, depth: number): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const row = `| \`${prefix}${name}\` | ${typeOf(field)} | ${required.has(name) ? "yes" : "no"} | ${cell(constraintsOf(field))} |`;
    const inner = field.properties ? field : field.items?.properties ? field.items : undefined;
    if (!inner || depth >= 3) return [row];
    return [row, ...fieldRows(inner, `${prefix}${name}${inner === field ? "." : "[]."}`, depth + 1)];
  });
}

function fieldTable(schema: Schema): string[] {
  if (!schema.properties) return [`${typeOf(schema)}.`, ""];
  return [
    "| field | type | required | constraints |",
    "| ----- | ---- | -------- | ----------- |",
    ...fieldRows(schema, "", 0),
    "",
  ];
}

/** The credentials an operation takes, as its security alternatives say ("none" for a public route). */
function credentialsOf(operation: Operation, schemes: Record<string, SecurityScheme>): string {
  const alternatives = (operation.security ?? []).map((requirement) =>
    Object.keys(requirement)
      .map((name) => {
        const scheme = schemes[name];
        return `\`${scheme?.name ?? name}\`${scheme?.in === "query" ? " (query)" : ""}`;
      })
      .join(" and "),
  );
  return alternatives.length ? alternatives.join(", or ") : "none (public)";
}

function operationSection(
  method: string,
  path: string,
  operation: Operation,
  schemes: Record<string, SecurityScheme>,
): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, "", `${operation.summary ?? ""}`, ""];
  lines.push(
    `Operation \`${operation.operationId}\`. Key: ${credentialsOf(operation, schemes)}.${operation.description ? ` ${operation.description}` : ""}`,
    "",
  );
  const parameters = operation.parameters ?? [];
  if (parameters.length > 0) {
    lines.push(
      "| parameter | in | type | required | constraints |",
      "| --------- | -- | ---- | -------- | ----------- |",
      ...parameters.map(
        (p) =>
          `| \`${p.name}\` | ${p.in} | ${typeOf(p.schema)} | ${p.required ? "yes" : "no"} | ${cell([constraintsOf(p.schema), p.description === p.schema?.description ? "" : (p.description ?? "")].filter(Boolean).join("; "))} |`,
      ),
      "",
    );
  }
  for (const [contentType, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
    lines.push(`Body (\`${contentType}\`):`, "", ...(schema ? fieldTable(schema) : ["any JSON.", ""]));
  }
  lines.push("| status | meaning | body |", "| ------ | ------- | ---- |");
  const inlineBodies: string[] = [];
  for (const [status, response] of Object.entries(operation.responses)) {
    const bodies = Object.entries(response.content ?? {}).map(([contentType, { schema }]) => {
      if (!schema?.properties) return `${typeOf(schema)} (\`${contentType}\`)`;
      inlineBodies.push(`Answer ${status} (\`${contentType}\`):`, "", ...fieldTable(schema));
      return `object, below (\`${contentType}\`)`;
    });
    lines.push(`| ${status} | ${cell(response.description)} | ${bodies.join(", ") || "—"} |`);
  }
  lines.push("", ...inlineBodies);
  return lines;
}

/** The reference as Markdown: operations grouped by tag (the function group), then the shared schemas. */
export function renderApiReference(document: ApiDocument): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? "other";
      byTag.set(tag, [
        ...(byTag.get(tag) ?? []),
        ...operationSection(method, path, operation, document.components?.securitySchemes ?? {}),
      ]);
    }
  }
  const schemas = Object.entries(document.components?.schemas ?? {});
  const lines = [
    `# ${document.info.title} API reference (${document.info.version})`,
    "",
    "<!-- Generated from the route table by `npm run docs:api`; do not edit by hand. -->",
    "",
    `${document.info.description ?? ""} The running service serves the same description as OpenAPI 3.1 at`,
    "`GET /openapi.json`.",
    "",
    "Conventions for every route: a tenant's key goes in the `SVC-API-KEY` header (the root key, for the",
    "routes that need it, too); bodies are JSON unless a route says otherwise; every error answers",
    "`application/problem+json` ([Problem](#problem)) with the request id, and validation errors list their",
    "fields in `errors`. Writes (POST, PUT, PATCH) accept `SVC-IDEMPOTENCY-KEY`, except proxy invocations;",
    "each operation lists the headers it reads. A typed client is in `clients/typescript/`.",
    "Behaviour beyond the shapes is described in the other documents of `docs/`.",
    "",
    "## Contents",
    "",
    ...[...byTag.keys()].map((tag) => `- [${tag}](#${anchorOf(tag)})`),
    "- [Schemas](#schemas)",
    "",
  ];
  for (const [tag, section] of byTag) lines.push(`## ${tag}`, "", ...section);
  lines.push("## Schemas", "");
  for (const [name, schema] of schemas) lines.push(`### ${name}`, "", ...fieldTable(schema));
  return `${lines.join("\n").trimEnd()}\n`;
}
