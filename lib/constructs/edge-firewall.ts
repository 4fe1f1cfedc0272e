import { Annotations, Fn, Stack, Token } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { HttpOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import { CfnWebACL } from "aws-cdk-lib/aws-wafv2";
import { Construct } from "constructs";

export interface EdgeFirewallOptions {
  /** Requests one source address may send in 5 minutes before WAF blocks it (default 2000). */
  rateLimitPer5Min?: number;
  /**
   * An existing web ACL (scope CLOUDFRONT, made in us-east-1) by ARN, instead of creating one; needed when
   * the vault's stack is in another region.
   */
  webAclArn?: string;
}

export interface EdgeFirewallProps extends EdgeFirewallOptions {
  api: HttpApi;
  /** The web ACL's metric names start with this. */
  name: string;
}

const DEFAULT_RATE_LIMIT_PER_5_MIN = 2000;

/**
 * AWS WAF in front of the API. API Gateway HTTP APIs cannot be associated with a web ACL (only REST API
 * stages, ALBs, CloudFront and a few others can), so the ACL sits on a CloudFront distribution whose origin is
 * the API: AWS managed rules (common, known bad inputs) and a rate-based rule per source address.
 * Callers must use the distribution's domain to be filtered: the API's own endpoint stays reachable
 * (docs/operations.md, "Production checklist").
 */
export class EdgeFirewall extends Construct {
  readonly distribution: Distribution;
  readonly webAclArn: string;
  readonly webAcl?: CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeFirewallProps) {
    super(scope, id);
    if (props.webAclArn) this.webAclArn = props.webAclArn;
    else {
      const region = Stack.of(this).region;
      if (!Token.isUnresolved(region) && region !== "us-east-1")
        throw new Error(
          `A CloudFront web ACL can only be created in us-east-1 (this stack is in ${region}): pass waf.webAclArn`,
        );
      if (Token.isUnresolved(region))
        Annotations.of(this).addWarningV2(
          "svc-vault:wafRegion",
          "The web ACL (scope CLOUDFRONT) deploys only in us-east-1: deploy this stack there, or pass waf.webAclArn.",
        );
      this.webAcl = this.createWebAcl(props);
      this.webAclArn = this.webAcl.attrArn;
    }

    // apiEndpoint is https://<id>.execute-api.<region>.amazonaws.com: its host is the origin.
    const host = Fn.select(2, Fn.split("/", props.api.apiEndpoint));
    this.distribution = new Distribution(this, "Distribution", {
      comment: "svc-vault API behind AWS WAF",
      webAclId: this.webAclArn,
      defaultBehavior: {
        origin: new HttpOrigin(host),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        // Nothing is cached: every answer is per key and per request.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Every header (SVC-API-KEY among them), query and cookie reach the API; Host is the origin's.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    });
  }

  private createWebAcl(props: EdgeFirewallProps): CfnWebACL {
    const visibility = (metric: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${props.name}-${metric}`,
      // Sampled requests carry headers (SVC-API-KEY): keep them out of the console.
      sampledRequestsEnabled: false,
    });
    const managed = (name: string, priority: number, countOnly: string[] = []) => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: "AWS",
          name,
          ...(countOnly.length
            ? { ruleActionOverrides: countOnly.map((rule) => ({ name: rule, actionToUse: { count: {} } })) }
            : {}),
        },
      },
      visibilityConfig: visibility(name),
    });
    return new CfnWebACL(this, "WebAcl", {
      scope: "CLOUDFRONT",
      defaultAction: { allow: {} },
      visibilityConfig: visibility("acl"),
      rules: [
        {
          name: "RateLimitPerAddress",
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: props.rateLimitPer5Min ?? DEFAULT_RATE_LIMIT_PER_5_MIN,
              aggregateKeyType: "IP",
            },
          },
          visibilityConfig: visibility("rate"),
        },
        // Bodies above 8 KB are legitimate here (batch tokenize, proxies: up to the service's own 1 MiB
        // limit, which answers 413), so that rule only counts.
        managed("AWSManagedRulesCommonRuleSet", 1, ["SizeRestrictions_BODY"]),
        managed("AWSManagedRulesKnownBadInputsRuleSet", 2),
      ],
    });
  }
}
