import { requirePageFits } from "#shared/domain/answer-size.ts";
import type { PageRequest, StorePage } from "#shared/ports/stores.ts";

export interface PageQuery {
  page: number;
  size: number;
  start?: string;
}

export function pageRequest(query: PageQuery): PageRequest {
  return { page: query.page, size: query.size, ...(query.start ? { start: query.start } : {}) };
}

/** The spec's envelope: `{pagination: {total_items, page_number, page_size, total_pages, next?}, data}`. */
export function envelope<T, U = T>(
  page: StorePage<T>,
  query: PageQuery,
  map: (item: T) => U = (i) => i as unknown as U,
) {
  const data = page.items.map(map);
  // Reactors' code (256 KiB each) or proxies' transforms, 100 to a page, outgrew what an answer holds.
  requirePageFits(data, query.size);
  return envelopeOfFittingPage({ ...page, items: data }, query);
}

/** The envelope of a page its use case already found to fit (listTokens checks before it logs the reads). */
export function envelopeOfFittingPage<T>(page: StorePage<T>, query: PageQuery) {
  return {
    pagination: {
      total_items: page.total,
      page_number: query.start ? 1 : query.page,
      page_size: query.size,
      total_pages: Math.ceil(page.total / query.size),
      ...(page.next ? { next: page.next } : {}),
    },
    data: page.items,
  };
}
