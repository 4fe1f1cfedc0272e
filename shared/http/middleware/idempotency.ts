import { createHash } from "node:crypto";
import { deps } from "#shared/container.ts";
import { logger } from "#shared/logger.ts";
import { conflict, validationError } from "../errors.ts";
import { header, type SvcMiddleware, type SvcRequest } from "../request-state.ts";

const IDEMPOTENT_METHODS = new Set(["POST", "PUT", "PATCH"]);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const REPLAYED_HEADER = "svc-idempotent-replayed";

function signatureOf(request: SvcRequest): string {
  const { method } = request.event.requestContext.http;
  return createHash("sha256").update(`${method} ${request.event.rawPath}`).digest("hex");
}

/**
 * SVC-IDEMPOTENCY-KEY on POST, PUT and PATCH (the spec's seven rules): a conditional write takes an
 * in-flight marker (a racing duplicate gets 409), a 2xx result is stored for 24 h and replayed with
 * SVC-IDEMPOTENT-REPLAYED: true, and a failure releases the key so a retry runs as new.
 */
export function idempotency(): SvcMiddleware {
  const release = async (request: SvcRequest) => {
    const claim = request.context.svc?.idempotency;
    if (!claim) return;
    request.context.svc.idempotency = undefined;
    await deps()
      .idempotency.release(claim.scope, claim.key)
      .catch((error: unknown) =>
        logger.warn("Idempotency key release failed", {
          request_id: request.context.svc.requestId,
          error_name: error instanceof Error ? error.name : "unknown",
        }),
      );
  };

  return {
    before: async (request) => {
      const state = request.context.svc;
      const route = state.route;
      const key = header(request.event, "svc-idempotency-key");
      if (!route || key === undefined || route.idempotent === false || !IDEMPOTENT_METHODS.has(route.method))
        return;
      if (!KEY_PATTERN.test(key))
        throw validationError("SVC-IDEMPOTENCY-KEY must be 1 to 255 visible ASCII characters.");
      const scope =
        state.principal?.kind === "application"
          ? state.principal.tenantId
          : (state.principal?.kind ?? "anonymous");
      const signature = signatureOf(request);
      const claim = await deps().idempotency.claim(scope, key, signature);
      if (claim.outcome === "in-flight")
        throw conflict("A request with this idempotency key is still being processed.");
      if (claim.outcome === "completed") {
        if (claim.requestSignature !== signature)
          throw conflict("This idempotency key was used for a different request.");
        return {
          statusCode: claim.response.status,
          headers: {
            ...claim.response.headers,
            [REPLAYED_HEADER]: "true",
            "svc-request-id": state.requestId,
          },
          ...(claim.response.body === undefined ? {} : { body: claim.response.body }),
        };
      }
      state.idempotency = { scope, key };
    },
    after: async (request) => {
      const claim = request.context.svc.idempotency;
      const response = request.response;
      if (!claim || !response) return;
      const status = response.statusCode ?? 200;
      if (status < 200 || status >= 300) return release(request);
      const contentType = response.headers?.["content-type"];
      await deps().idempotency.complete(claim.scope, claim.key, {
        status,
        ...(typeof response.body === "string" ? { body: response.body } : {}),
        headers: contentType ? { "content-type": String(contentType) } : {},
      });
      request.context.svc.idempotency = undefined;
    },
    onError: release,
  };
}
