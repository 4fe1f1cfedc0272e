import { z } from "zod";
import { defineRoute, type RouteSpec } from "#shared/http/route.ts";
import {
  applicationKeyParams,
  applicationKeySchema,
  applicationSchema,
  createApplicationBody,
  updateApplicationBody,
} from "#shared/schemas/applications.ts";
import { idParams, paginated, pagingQuery, problemSchema } from "#shared/schemas/common.ts";
import { entityTypeSchema, logQuery, logSchema } from "#shared/schemas/logs.ts";
import { clockBody, createdTenantSchema, createTenantBody, tenantSchema } from "#shared/schemas/tenants.ts";

const problem = (description: string) => ({ description, schema: problemSchema });
const common = {
  400: problem("Invalid input"),
  401: problem("Missing, invalid or revoked key"),
  403: problem("The key lacks the permission"),
};

/**
 * The one route table: API Gateway routes (CDK), the local gateway, request validation and
 * GET /openapi.json all come from here.
 */
export const routes = {
  healthz: defineRoute({
    method: "GET",
    path: "/healthz",
    group: "system",
    auth: "none",
    summary: "Readiness probe",
    tags: ["system"],
    responses: { 200: { description: "Ready", schema: z.object({ status: z.literal("ok") }) } },
  }),
  openapi: defineRoute({
    method: "GET",
    path: "/openapi.json",
    group: "system",
    auth: "none",
    summary: "This API as an OpenAPI 3.1 document",
    tags: ["system"],
    responses: { 200: { description: "OpenAPI document" } },
  }),
  advanceTestClock: defineRoute({
    method: "POST",
    path: "/_test/clock",
    group: "system",
    auth: "root",
    summary: "Move the local test clock forward (SVC_TEST_CLOCK=1 only)",
    tags: ["system"],
    body: clockBody,
    idempotent: false,
    internal: true,
    responses: { 200: { description: "The new now", schema: z.object({ now: z.string() }) }, ...common },
  }),

  createTenant: defineRoute({
    method: "POST",
    path: "/tenants",
    group: "tenants",
    auth: "root",
    summary: "Create a tenant with its owner and a management application (root key)",
    tags: ["tenants"],
    body: createTenantBody,
    responses: {
      201: { description: "Created; management_key is shown once", schema: createdTenantSchema },
      ...common,
    },
  }),
  getSelfTenant: defineRoute({
    method: "GET",
    path: "/tenants/self",
    group: "tenants",
    auth: "key",
    permissions: ["tenant:read"],
    summary: "The caller's tenant",
    tags: ["tenants"],
    responses: { 200: { description: "Tenant", schema: tenantSchema }, ...common },
  }),

  createApplication: defineRoute({
    method: "POST",
    path: "/applications",
    group: "applications",
    auth: "key",
    permissions: ["application:create"],
    summary: "Create an application (its key is shown once)",
    tags: ["applications"],
    body: createApplicationBody,
    responses: { 201: { description: "Created", schema: applicationSchema }, ...common },
  }),
  listApplications: defineRoute({
    method: "GET",
    path: "/applications",
    group: "applications",
    auth: "key",
    permissions: ["application:read"],
    summary: "List applications",
    tags: ["applications"],
    query: pagingQuery(),
    responses: {
      200: { description: "Page of applications", schema: paginated(applicationSchema) },
      ...common,
    },
  }),
  getOwnApplication: defineRoute({
    method: "GET",
    path: "/applications/key",
    group: "applications",
    auth: "key",
    summary: "The application of the calling key",
    tags: ["applications"],
    responses: { 200: { description: "Application", schema: applicationSchema }, ...common },
  }),
  getApplication: defineRoute({
    method: "GET",
    path: "/applications/{id}",
    group: "applications",
    auth: "key",
    permissions: ["application:read"],
    summary: "Get an application",
    tags: ["applications"],
    params: idParams,
    responses: {
      200: { description: "Application", schema: applicationSchema },
      ...common,
      404: problem("Not found"),
    },
  }),
  updateApplication: defineRoute({
    method: "PUT",
    path: "/applications/{id}",
    group: "applications",
    auth: "key",
    permissions: ["application:update"],
    summary: "Replace an application's name, permissions and rules",
    tags: ["applications"],
    params: idParams,
    body: updateApplicationBody,
    responses: {
      200: { description: "Application", schema: applicationSchema },
      ...common,
      404: problem("Not found"),
    },
  }),
  deleteApplication: defineRoute({
    method: "DELETE",
    path: "/applications/{id}",
    group: "applications",
    auth: "key",
    permissions: ["application:delete"],
    summary: "Delete an application and revoke its keys",
    tags: ["applications"],
    params: idParams,
    responses: { 204: { description: "Deleted" }, ...common, 404: problem("Not found") },
  }),
  createApplicationKey: defineRoute({
    method: "POST",
    path: "/applications/{id}/keys",
    group: "applications",
    auth: "key",
    permissions: ["application:update"],
    summary: "Add a key to an application (shown once)",
    tags: ["applications"],
    params: idParams,
    responses: {
      201: { description: "Created", schema: applicationKeySchema },
      ...common,
      404: problem("Not found"),
    },
  }),
  listApplicationKeys: defineRoute({
    method: "GET",
    path: "/applications/{id}/keys",
    group: "applications",
    auth: "key",
    permissions: ["application:read"],
    summary: "List an application's keys (ids only)",
    tags: ["applications"],
    params: idParams,
    responses: {
      200: { description: "Keys", schema: z.array(applicationKeySchema) },
      ...common,
      404: problem("Not found"),
    },
  }),
  getApplicationKey: defineRoute({
    method: "GET",
    path: "/applications/{id}/keys/{keyId}",
    group: "applications",
    auth: "key",
    permissions: ["application:read"],
    summary: "Get one key's metadata",
    tags: ["applications"],
    params: applicationKeyParams,
    responses: {
      200: { description: "Key", schema: applicationKeySchema },
      ...common,
      404: problem("Not found"),
    },
  }),
  deleteApplicationKey: defineRoute({
    method: "DELETE",
    path: "/applications/{id}/keys/{keyId}",
    group: "applications",
    auth: "key",
    permissions: ["application:update"],
    summary: "Revoke a key",
    tags: ["applications"],
    params: applicationKeyParams,
    responses: { 204: { description: "Revoked" }, ...common, 404: problem("Not found") },
  }),

  listLogs: defineRoute({
    method: "GET",
    path: "/logs",
    group: "logs",
    auth: "key",
    permissions: ["log:read"],
    summary: "Search the audit log, newest first",
    tags: ["logs"],
    query: logQuery,
    responses: { 200: { description: "Page of log entries", schema: paginated(logSchema) }, ...common },
  }),
  listEntityTypes: defineRoute({
    method: "GET",
    path: "/logs/entity-types",
    group: "logs",
    auth: "key",
    permissions: ["log:read"],
    summary: "The entity types log entries refer to",
    tags: ["logs"],
    responses: { 200: { description: "Entity types", schema: z.array(entityTypeSchema) }, ...common },
  }),
} satisfies Record<string, RouteSpec>;

export type Routes = typeof routes;
export type OperationId = keyof Routes;

export const routeList = Object.entries(routes).map(([operationId, route]) => ({
  operationId: operationId as OperationId,
  ...(route as RouteSpec),
}));
