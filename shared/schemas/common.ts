import * as z from "zod";
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenSegment } from "#shared/domain/safe-keys.ts";
import { storableProblem } from "#shared/domain/storable.ts";
import { allowedHostError } from "#shared/sandbox/outbound-request.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** `page`/`size` (spec defaults 20/1, maximum 100 or less) plus `start` for cursor paging. */
export function pagingQuery(maxSize = MAX_PAGE_SIZE) {
  return z.object({
    page: z.coerce.number().int().min(1).default(1),
    size: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxSize, { message: `size must be at most ${maxSize}` })
      .default(DEFAULT_PAGE_SIZE),
    start: z.string().min(1).max(512).optional(),
  });
}

/**
 * A query parameter that may repeat (`?id=a&id=b`): always an array once parsed, of at most `max` values (a page's
 * worth: `GET /tokens?id=…` read every id given, 1,500 reads and 2.8 MB held to show one token: availability
 * review, 28 Nov 2026).
 */
export const repeatable = <T extends z.ZodType>(item: T, max = MAX_PAGE_SIZE) =>
  z.preprocess(
    (value) => (value === undefined ? undefined : [value].flat()),
    z
      .array(item)
      .max(max, { message: `at most ${max} values` })
      .optional(),
  );

/**
 * An id in a path or a reference: at most 400 characters and 900 bytes of UTF-8, so every key built from it
 * stays within DynamoDB's key sizes (2,048 bytes for a partition key, 1,024 for a sort key).
 */
export const idString = z
  .string()
  .min(1)
  .max(400)
  .refine((id) => Buffer.byteLength(id) <= 900, "must be at most 900 bytes of UTF-8");

/** An id the service generated (UUIDs): short, so two of them fit in one sort key. */
export const generatedId = z.string().min(1).max(100);

export const idParams = z.object({ id: idString });

/** A caller's structure the store keeps as a map (a mask, a configuration): see shared/domain/storable.ts. */
export const storedJson = (maxBytes: number) => z.unknown().superRefine(storable(maxBytes));

/** The refinement behind storedJson, for schemas of a more precise type (a record of configuration). */
export const storable = (maxBytes: number) => (value: unknown, ctx: z.RefinementCtx) => {
  const problem = storableProblem(value, maxBytes);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
};

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.record(z.string(), z.array(z.string())).optional(),
    request_id: z.string().optional(),
  })
  .meta({ id: "Problem" });

export const paginationSchema = z
  .object({
    total_items: z.number().int(),
    page_number: z.number().int(),
    page_size: z.number().int(),
    total_pages: z.number().int(),
    next: z.string().optional(),
  })
  .meta({ id: "Pagination" });

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({ pagination: paginationSchema, data: z.array(item) });

export const isoDate = z.iso.datetime({ offset: true });

/**
 * A key or dotted path named by the caller (metadata keys, configuration and parameter names): never
 * `__proto__`, `prototype` or `constructor`, nor a path with one of them as a segment.
 */
export const safeKey = (max: number, min = 1) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((key) => !hasForbiddenSegment(key), FORBIDDEN_KEY_MESSAGE);

/**
 * Where a formula's or proxy transform's `fetch` may go: `host`, `host:port` or `*.domain` (any subdomain).
 * Absent: any host the address rule allows. An empty list: no outbound call at all.
 */
export const allowedHosts = z
  .array(
    z
      .string()
      .min(1)
      .max(300)
      .superRefine((entry, ctx) => {
        const problem = allowedHostError(entry);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
  )
  .max(100);
