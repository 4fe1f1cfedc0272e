import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import type { ApiRoute } from "#shared/http/route.ts";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

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
  registry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "SVC-API-KEY",
  });
  for (const route of routeList) {
    if (route.internal) continue;
    registry.registerPath({
      method: route.method.toLowerCase() as "get",
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      tags: [...route.tags],
      ...(route.auth === "none" ? {} : { security: [{ ApiKey: [] }] }),
      ...(route.permissions?.length || route.cors ? { description: describe(route) } : {}),
      request: {
        ...(route.params ? { params: route.params as never } : {}),
        ...(route.query ? { query: route.query as never } : {}),
        ...(route.body
          ? {
              body: {
                required: true,
                content: { [route.contentType ?? "application/json"]: { schema: route.body } },
              },
            }
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
    },
  });
  cachedDocuments.set(routeList, document);
  return document;
}
