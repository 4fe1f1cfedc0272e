import type { Routes } from "#shared/api/index.ts";
import { logsRoutes } from "#shared/api/logs.ts";
import { composeCore } from "#shared/composition/core.ts";
import { auditLogStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { entityTypeList } from "#shared/domain/audit.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

/** The adapters the logs routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...auditLogStore(core) };
}
export type LogsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "logs", LogsDeps> = {
  listLogs: async ({ deps, principal, query }) => {
    const page = await deps.auditLog.list(
      principal.tenantId,
      {
        entityType: query.entity_type,
        entityId: query.entity_id,
        startDate: query.start_date,
        endDate: query.end_date,
      },
      pageRequest(query),
    );
    return { status: 200, body: envelope(page, query) };
  },
  listEntityTypes: async () => ({ status: 200, body: entityTypeList() }),
};

export const handler = createHttpHandler(logsRoutes, "logs", routes, () => compose(config()));
