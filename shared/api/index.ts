import { listRoutes } from "#shared/http/route.ts";
import { applicationsRoutes } from "./applications.ts";
import { elementsRoutes } from "./elements.ts";
import { logsRoutes } from "./logs.ts";
import { membersRoutes } from "./members.ts";
import { proxiesRoutes } from "./proxies.ts";
import { proxyRoutes } from "./proxy.ts";
import { reactorsRoutes } from "./reactors.ts";
import { sessionsRoutes } from "./sessions.ts";
import { systemRoutes } from "./system.ts";
import { tenantsRoutes } from "./tenants.ts";
import { tokensRoutes } from "./tokens.ts";
import { transactionsRoutes } from "./transactions.ts";

/**
 * The one route table, assembled from the groups' files: API Gateway routes (CDK), the local gateway,
 * request validation and GET /openapi.json are all given this table (shared/http never imports it).
 */
export const routeTable = {
  ...systemRoutes,
  ...tenantsRoutes,
  ...applicationsRoutes,
  ...logsRoutes,
  ...tokensRoutes,
  ...transactionsRoutes,
  ...sessionsRoutes,
  ...elementsRoutes,
  ...membersRoutes,
  ...proxiesRoutes,
  ...proxyRoutes,
  ...reactorsRoutes,
};

export type Routes = typeof routeTable;
export type OperationId = keyof Routes;

/** The table as a list, each route with its operation id. */
export const routeList = listRoutes(routeTable);
