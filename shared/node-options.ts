/**
 * Node.js options of every function we host in Lambda (the API's and the tenants' runner functions).
 * `--enable-source-maps`: stack traces in logs point at the TypeScript sources through the bundled source map.
 * `--disable-proto=throw`: `Object.prototype.__proto__` throws, so no request-derived key can reach a prototype
 * through it (docs/security.md, "Hostile callers: process integrity").
 */
export const LAMBDA_NODE_OPTIONS = "--enable-source-maps --disable-proto=throw";
