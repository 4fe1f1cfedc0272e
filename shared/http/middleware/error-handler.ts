import { logger } from "#shared/logger.ts";
import { HttpError } from "../errors.ts";
import { internalProblem, PROBLEM_CONTENT_TYPE, problemFromError } from "../problem.ts";
import type { SvcMiddleware } from "../request-state.ts";

/** The single place where errors become problem+json. Unknown errors: generic 500, logged with the request id. */
export function errorHandler(): SvcMiddleware {
  return {
    onError: async (request) => {
      const { error } = request;
      const requestId = request.context.svc?.requestId;
      if (error instanceof HttpError) {
        request.response = {
          statusCode: error.status,
          headers: { "content-type": PROBLEM_CONTENT_TYPE, ...error.headers },
          body: JSON.stringify(problemFromError(error, requestId)),
        };
        return;
      }
      // Only the error's name and stack are logged: SDK errors may echo request values in their message.
      logger.error("Unhandled error", {
        request_id: requestId,
        error_name: error instanceof Error ? error.name : typeof error,
        stack: error instanceof Error ? error.stack?.split("\n").slice(1, 8).join("\n") : undefined,
      });
      request.response = {
        statusCode: 500,
        headers: { "content-type": PROBLEM_CONTENT_TYPE },
        body: JSON.stringify(internalProblem(requestId)),
      };
    },
  };
}
