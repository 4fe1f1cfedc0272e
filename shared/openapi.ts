import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import * as z from "zod";
import { type ApiRoute, honoursIdempotencyKey } from "#shared/http/route.ts";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/** The key schemes: the root key travels in the tenant keys' header, the proxy key in its own or the query. */
const SECURITY_SCHEMES = {
  ApiKey: {
    type: "apiKey",
    in: "header",
    name: "SVC-API-KEY",
    description: "A tenant's key: management, private, public or session.",
  },
  RootKey: {
    type: "apiKey",
    in: "header",
    name: "SVC-API-KEY",
    description: "The deployment's root key (tenant creation only).",
  },
  ProxyKey: { type: "apiKey", in: "header", name: "SVC-PROXY-KEY", description: "A proxy's key." },
  ProxyKeyQuery: {
    type: "apiKey",
    in: "query",
    name: "svc-proxy-key",
    description: "A proxy's key, for callers that cannot set headers; never forwarded to the destination.",
  },
} as const;

type Security = Record<keyof typeof SECURITY_SCHEMES, never[]>[];

/**
 * Who may call, as OpenAPI says it: every route states it (a public route with an empty list). A proxy takes
 * its key in the header or the query, with SVC-API-KEY as well when the proxy requires it.
 */
function securityOf(route: ApiRoute): Partial<Security[number]>[] {
  if (route.auth === "key") return [{ ApiKey: [] }];
  if (route.auth === "root") return [{ RootKey: [] }];
  if (route.credential === "proxy-key")
    return [
      { ProxyKey: [] },
      { ProxyKeyQuery: [] },
      { ProxyKey: [], ApiKey: [] },
      { ProxyKeyQuery: [], ApiKey: [] },
    ];
  return [];
}

/** A greedy path parameter (`{name+}`, API Gateway's and the local gateway's syntax) as OpenAPI writes it. */
const GREEDY = /\{([A-Za-z0-9_]+)\+\}/g;
const openApiPath = (path: string) => path.replace(GREEDY, "{$1}");
const greedyNames = (path: string) => new Set([...path.matchAll(GREEDY)].map((m) => m[1] as string));
const pathNames = (path: string) =>
  [...openApiPath(path).matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] as string);

/**
 * The path parameters: the route's schema, or a string per `{name}` of the path when it has none (so no
 * template goes undeclared); a greedy one says it takes the rest of the path.
 */
function pathParams(route: ApiRoute): z.ZodObject | undefined {
  const names = pathNames(route.path);
  if (names.length === 0) return undefined;
  const declared = route.params instanceof z.ZodObject ? route.params.shape : {};
  const greedy = greedyNames(route.path);
  return z.object(
    Object.fromEntries(
      names.map((name) => {
        const schema = (declared[name] as z.ZodType | undefined) ?? z.string();
        return [
          name,
          greedy.has(name)
            ? schema.meta({
                description:
                  "The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded.",
              })
            : schema,
        ];
      }),
    ),
  );
}

const IDEMPOTENCY_HEADER = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/)
  .meta({
    description:
      "Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true).",
  });
const TRANSACTION_HEADER = z.string().meta({
  description: "Joins the write to an open transaction (POST /transactions, beta).",
});

/** The headers the route reads besides its credential. */
function headers(route: ApiRoute): z.ZodObject | undefined {
  const shape = {
    ...(honoursIdempotencyKey(route) ? { "SVC-IDEMPOTENCY-KEY": IDEMPOTENCY_HEADER.optional() } : {}),
    ...(route.transactional ? { "SVC-TRANSACTION-ID": TRANSACTION_HEADER.optional() } : {}),
  };
  return Object.keys(shape).length ? z.object(shape) : undefined;
}

/**
 * Query parameters `<prefix>.<name>=value`: OpenAPI names no parameter by a pattern, so they are one object
 * parameter, serialized `style: form, explode: true` (each property its own `name=value` pair) whose property
 * names carry the prefix.
 */
function prefixedQueryParameter(prefix: { prefix: string; description: string }) {
  return {
    name: prefix.prefix,
    in: "query",
    required: false,
    style: "form",
    explode: true,
    description: prefix.description,
    schema: {
      type: "object",
      propertyNames: { pattern: `^${prefix.prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\..+$` },
      additionalProperties: { type: "string" },
    },
  } as const;
}

/** The route's permissions, and whether browsers may call it (CORS). */
function describe(route: ApiRoute): string {
  return [
    route.permissions?.length ? `Requires ${route.permissions.join(", ")}.` : "",
    route.cors ? "Browsers may call it from the key's application's allowed_origins (CORS)." : "",
  ]
    .filter(Boolean)
    .join(" ");
}

const cachedDocuments = new WeakMap<readonly ApiRoute[], OpenApiDocument>();

/** GET /openapi.json, generated from the route table it is given (built once per table and process). */
export function openApiDocument(routeList: readonly ApiRoute[]): OpenApiDocument {
  const cached = cachedDocuments.get(routeList);
  if (cached) return cached;
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES))
    registry.registerComponent("securitySchemes", name, scheme);
  const published = routeList.filter((route) => !route.internal);
  for (const route of published) {
    const params = pathParams(route);
    const routeHeaders = headers(route);
    registry.registerPath({
      method: route.method.toLowerCase() as "get",
      path: openApiPath(route.path),
      operationId: route.operationId,
      summary: route.summary,
      tags: [...route.tags],
      security: securityOf(route),
      ...(route.permissions?.length || route.cors ? { description: describe(route) } : {}),
      request: {
        ...(params ? { params } : {}),
        ...(route.query ? { query: route.query as never } : {}),
        ...(routeHeaders ? { headers: routeHeaders } : {}),
        ...(route.body
          ? {
              body: {
                required: true,
                content: { [route.contentType ?? "application/json"]: { schema: route.body } },
              },
            }
          : route.rawBody
            ? { body: { required: false, content: { "*/*": { schema: z.unknown() } } } }
            : {}),
      },
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, spec]) => [
          status,
          {
            description: spec.description,
            ...(spec.schema
              ? {
                  content: {
                    [Number(status) >= 400 ? "application/problem+json" : "application/json"]: {
                      schema: spec.schema,
                    },
                  },
                }
              : {}),
          },
        ]),
      ),
    });
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "svc-vault",
      version: "0.1.0",
      description: "Self-hostable data tokenization vault. Errors are RFC 9457 problem+json.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    // Relative: the deployment that serves this document (a client sets its own base URL).
    servers: [{ url: "/", description: "The deployment serving this document" }],
  });
  for (const route of published) {
    if (!route.queryPrefix) continue;
    const operation = document.paths?.[openApiPath(route.path)]?.[route.method.toLowerCase() as "get"];
    if (operation)
      operation.parameters = [...(operation.parameters ?? []), prefixedQueryParameter(route.queryPrefix)];
  }
  cachedDocuments.set(routeList, document);
  return document;
}
