import * as z from "zod";
import { isoDate, pagingQuery } from "./common.ts";

const toIso = (v: string) => new Date(v).toISOString();

export const logQuery = pagingQuery()
  .extend({
    entity_type: z.string().min(1).max(100).optional(),
    entity_id: z.string().min(1).max(400).optional(),
    start_date: isoDate.transform(toIso).optional(),
    end_date: isoDate.transform(toIso).optional(),
  })
  .refine((q) => !q.start_date || !q.end_date || q.start_date <= q.end_date, {
    message: "start_date must not be after end_date",
    path: ["start_date"],
  });

export const logSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    actor_id: z.string().optional(),
    actor_type: z.string().optional(),
    entity_type: z.string(),
    entity_id: z.string(),
    operation: z.string(),
    message: z.string(),
    created_at: z.string(),
  })
  .meta({ id: "Log" });

export const entityTypeSchema = z
  .object({ display_name: z.string(), value: z.string() })
  .meta({ id: "EntityType" });
