import * as z from "zod";
import { clockBody, receiptKeySchema } from "#shared/schemas/tenants.ts";
import { routeGroup } from "./group.ts";

/** Health, the OpenAPI document and the local test clock (the system function also answers unknown routes). */
export const systemRoutes = routeGroup("system", {
  healthz: {
    method: "GET",
    path: "/healthz",
    auth: "none",
    summary: "Readiness probe: 200 while the data store answers and the keys work, else 503 with Retry-After",
    responses: {
      200: {
        description: "Ready: every part of the readiness check passed",
        schema: z.object({
          status: z.literal("ok"),
          checks: z.object({ store: z.literal("ok"), keys: z.literal("ok") }),
        }),
      },
      503: {
        description:
          "Not ready: the data store cannot be reached, or the master key cannot wrap and unwrap a probe data key " +
          "(each checked with a short timeout, cached about 1 s); `errors` names the parts that failed",
      },
    },
  },
  openapi: {
    method: "GET",
    path: "/openapi.json",
    auth: "none",
    summary: "This API as an OpenAPI 3.1 document",
    responses: { 200: { description: "OpenAPI document" } },
  },
  receiptKey: {
    method: "GET",
    path: "/.well-known/svc-vault/receipt-key",
    auth: "none",
    summary: "The public key that verifies tenant deletion receipts (docs/security.md shows how)",
    responses: {
      200: { description: "The deployment's receipt signing key", schema: receiptKeySchema },
      503: { description: "The deployment has no receipt signing key" },
    },
  },
  advanceTestClock: {
    method: "POST",
    path: "/_test/clock",
    auth: "root",
    summary: "Move the local test clock forward (SVC_TEST_CLOCK=1 only)",
    body: clockBody,
    idempotent: false,
    internal: true,
    responses: {
      200: {
        description: "The new now, and what the sweep it triggered removed",
        schema: z.object({ now: z.string() }),
      },
    },
  },
});
