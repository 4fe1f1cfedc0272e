import type { LogEntry, LogQuery } from "#shared/domain/audit.ts";
import { validationError } from "#shared/domain/errors.ts";
import type { AuditLogStore, PageRequest, StorePage } from "#shared/ports/stores.ts";
import { decodePosition, encodePosition } from "./positions.ts";

/** The audit log in memory: the same order, filters, paging and cursor rules as the DynamoDB store. */
export class MemoryAuditLogStore implements AuditLogStore {
  private readonly entries: LogEntry[] = [];

  async append(entries: LogEntry[]): Promise<void> {
    this.add(entries);
  }

  /** Appends at once: the in-memory stores write their entries with their own writes, as DynamoDB's do. */
  add(entries: LogEntry[]): void {
    this.entries.push(...entries.map((entry) => structuredClone(entry)));
  }

  async list(tenantId: string, query: LogQuery, page: PageRequest): Promise<StorePage<LogEntry>> {
    const cursor = page.start === undefined ? undefined : decodePosition(page.start);
    if (page.start !== undefined && cursor === undefined)
      throw validationError("The start cursor is invalid.");
    const lower = query.startDate ?? "0";
    const upper = query.endDate ?? "~";
    // Newest first by `created_at#id`, the DynamoDB store's sort key; start and end dates bound it inclusively.
    const matching = this.entries
      .filter(
        (e) =>
          e.tenant_id === tenantId &&
          (query.entityId === undefined || e.entity_id === query.entityId) &&
          (query.entityType === undefined || e.entity_type === query.entityType),
      )
      .map((entry) => ({ entry, position: positionOf(entry) }))
      .filter(({ position }) => position >= lower && position <= upper)
      .sort((a, b) => b.position.localeCompare(a.position));
    const after = cursor === undefined ? matching : matching.filter(({ position }) => position < cursor);
    const offset = cursor ? 0 : (page.page - 1) * page.size;
    const items = after.slice(offset, offset + page.size);
    const last = items.at(-1);
    return {
      items: items.map(({ entry }) => structuredClone(entry)),
      total: matching.length,
      ...(after.length > offset + page.size && last ? { next: encodePosition(last.position) } : {}),
    };
  }
}

const positionOf = (entry: LogEntry) => `${entry.created_at}#${entry.id}`;
