/**
 * Stands in for `semver` in Lambda bundles (BUNDLE_POLICY.alias, lib/bundling.ts). Its one user there is
 * aws-xray-sdk-core's AWS SDK v2 patcher (patchers/aws_p.js, loaded by the SDK's index), which checks the v2
 * SDK's version; we capture v3 clients only (shared/tracer.ts), so it never runs, and the 30 KB stay out.
 * Should anything ever call it, it fails loudly rather than answer a wrong comparison.
 */
function unavailable(): never {
  throw new Error("semver is not bundled in Lambda functions (lib/bundling.ts BUNDLE_POLICY.alias)");
}

export const gte = unavailable;
export default { gte };
