import { cancellationCodes } from "#shared/aws-errors.ts";
import { answerFits } from "#shared/domain/answer-size.ts";
import { answerTooLarge } from "#shared/domain/errors.ts";
import { logger } from "#shared/logger.ts";
import { isStoreOutage } from "../outage.ts";
import { httpErrorOf, internalProblem, PROBLEM_CONTENT_TYPE, problemFromError } from "../problem.ts";
import type { SvcMiddleware } from "../request-state.ts";

/**
 * The single place where errors become problem+json (domain errors through problem.ts's mapping). Unknown
 * errors: generic 500, logged with the request id.
 */
export function errorHandler(): SvcMiddleware {
  return {
    onError: (request) => {
      const { error } = request;
      const requestId = request.context.svc?.requestId;
      const known = httpErrorOf(error);
      // An outage is answered 503 (problem.ts) but still worth a line: the operator should know the store is away.
      if (isStoreOutage(error))
        logger.warn("Store unavailable", {
          request_id: requestId,
          error_name: error instanceof Error ? error.name : typeof error,
        });
      if (known) {
        const body = JSON.stringify(problemFromError(known, requestId));
        // A problem too is an answer a Lambda result must carry: a reactor's thrown error echoing megabytes of its
        // input into `errors` made one past 6 MB (review round 9).
        const fits = answerFits(body);
        const http = fits ? known : (httpErrorOf(answerTooLarge()) ?? known);
        request.response = {
          statusCode: http.status,
          headers: { "content-type": PROBLEM_CONTENT_TYPE, ...http.headers },
          body: fits ? body : JSON.stringify(problemFromError(http, requestId)),
        };
        return;
      }
      // Only the error's name, a cancelled transaction's per-item codes and the stack are logged: SDK errors may
      // echo request values in their message.
      const codes = cancellationCodes(error);
      logger.error("Unhandled error", {
        request_id: requestId,
        error_name: error instanceof Error ? error.name : typeof error,
        ...(codes ? { cancellation_codes: codes } : {}),
        // Frames only: a message over several lines (it may echo a value) continues past the stack's first line.
        stack:
          error instanceof Error
            ? error.stack
                ?.split("\n")
                .filter((line) => /^\s+at /.test(line))
                .slice(0, 7)
                .join("\n")
            : undefined,
      });
      request.response = {
        statusCode: 500,
        headers: { "content-type": PROBLEM_CONTENT_TYPE },
        body: JSON.stringify(internalProblem(requestId)),
      };
    },
  };
}
