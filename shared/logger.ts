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

/**
 * The logger's level as a number (Powertools' scale: INFO is 12), read once and again after each `setLogLevel`:
 * Powertools resolves it from its invocation store and the environment on every read (a few µs, and the access
 * line asks on every request). Nothing here uses its per-invocation sampling, the other way the level changes.
 */
let cachedLevel: number | undefined;
const setLevel = logger.setLogLevel.bind(logger);
logger.setLogLevel = (level) => {
  setLevel(level);
  cachedLevel = undefined;
};
export const logLevel = (): number => {
  cachedLevel ??= logger.level;
  return cachedLevel;
};
