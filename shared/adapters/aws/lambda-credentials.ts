import { fromEnv } from "@aws-sdk/credential-provider-env";
import type { AwsCredentialIdentityProvider } from "@smithy/types";

/**
 * Stands in for `@aws-sdk/credential-provider-node` in Lambda bundles (BUNDLE_POLICY.alias, lib/bundling.ts):
 * a Lambda's credentials are its execution role's, which the runtime puts in AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, the first link of the SDK's default chain. The other links
 * (profiles, SSO, process, web identity, container and instance metadata) and the STS and SSO clients they
 * load (@aws-sdk/nested-clients) are never reached there: leaving them out saves ≈ 100 KB per bundle. Local
 * hosting and tests run the unaliased SDK.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): AwsCredentialIdentityProvider =>
  fromEnv(init);
