import * as z from "zod";
import { paginated } from "#shared/schemas/common.ts";
import { entityTypeSchema, logQuery, logSchema } from "#shared/schemas/logs.ts";
import { routeGroup } from "./group.ts";

/** The audit log. */
export const logsRoutes = routeGroup("logs", {
  listLogs: {
    method: "GET",
    path: "/logs",
    auth: "key",
    permissions: ["log:read"],
    summary: "Search the audit log, newest first",
    query: logQuery,
    responses: { 200: { description: "Page of log entries", schema: paginated(logSchema) } },
  },
  listEntityTypes: {
    method: "GET",
    path: "/logs/entity-types",
    auth: "key",
    permissions: ["log:read"],
    summary: "The entity types log entries refer to",
    responses: { 200: { description: "Entity types", schema: z.array(entityTypeSchema) } },
  },
});
