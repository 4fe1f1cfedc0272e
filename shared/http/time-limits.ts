/** API Gateway's HTTP API gives up on an integration after 29 s (the caller then sees a bare 503/504). */
export const API_GATEWAY_TIMEOUT_SECONDS = 29;

/**
 * An API function's timeout: below API Gateway's limit, so a function that times out fails while API Gateway
 * still waits (its own error reaches the logs and the caller at once), and above the longest wait inside a
 * request: the table's bounded retries, a proxy's destination (at most 25 s) or a synchronous react (at most 25 s).
 */
export const API_FUNCTION_TIMEOUT_SECONDS = API_GATEWAY_TIMEOUT_SECONDS - 1;
