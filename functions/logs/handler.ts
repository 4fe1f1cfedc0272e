import { routes } from "#shared/api/index.ts";
import { entityTypeList } from "#shared/domain/audit.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

export const handler = createHttpHandler(routes, "logs", {
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
});
