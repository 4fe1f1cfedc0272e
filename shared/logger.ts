import { Logger } from "@aws-lambda-powertools/logger";

/**
 * The one structured JSON logger. Level comes from POWERTOOLS_LOG_LEVEL / LOG_LEVEL. Callers log
 * identifiers and outcomes only: never events, bodies, keys or token data.
 */
export const SERVICE_NAME = "svc-vault";

export const logger = new Logger({
  serviceName: SERVICE_NAME,
  logLevel: (process.env.LOG_LEVEL ?? process.env.POWERTOOLS_LOG_LEVEL ?? "INFO") as "INFO",
});
