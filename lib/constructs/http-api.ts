import { Validations } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  ApiMapping,
  type CfnRoute,
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { ICertificate } from "aws-cdk-lib/aws-certificatemanager";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import type { IKey } from "aws-cdk-lib/aws-kms";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { preflightRoutes } from "#shared/http/cors.ts";
import {
  type ApiRoute,
  type AuthMode,
  FUNCTION_GROUPS,
  type FunctionGroup,
  GROUP_DATA_KEYS,
} from "#shared/http/route.ts";
import { GROUP_AFTER_BUNDLING } from "../bundling.ts";
import { FUNCTION_ACCESS } from "../function-groups.ts";
import { ApiFunction } from "./api-function.ts";
import { type SandboxAccess, SandboxRunners } from "./sandbox-runners.ts";

/** A custom domain for the API: its name and an ACM certificate for it in the stack's region. */
export interface VaultDomain {
  name: string;
  certificate: ICertificate;
}

export interface VaultHttpApiProps {
  /** The API's name: unique per account and region (TokenizationVault derives it from its path). */
  apiName: string;
  /** The route table (shared/api): one API Gateway route per entry, to its group's function. */
  routes: readonly ApiRoute[];
  table: ITable;
  dataKey: IKey;
  /** Signs tenant deletion receipts (the groups the access table gives `receiptKey`). */
  receiptKey: IKey;
  rootKeyParameterName: string;
  /** Verified SES identity invitations are sent from. */
  emailSender: string;
  /** Where invitation links point; defaults to this API's POST /invitations/accept. */
  invitationUrl?: string;
  logRetention?: RetentionDays;
  /** Default-stage throttling, for the whole API (default 100 requests per second, bursts of 200). */
  throttle?: { burstLimit: number; rateLimit: number };
  /** Serve the API on this domain too (a regional domain name mapped to the default stage). */
  domain?: VaultDomain;
}

export const DEFAULT_THROTTLE = { burstLimit: 200, rateLimit: 100 } as const;

/** API Gateway has no authorizer here; each route's reason for that, by how the function authenticates. */
const NO_AUTHORIZER_REASON: Record<AuthMode, string> = {
  key:
    "Authenticated in the function: the SVC-API-KEY header's SHA-256 hash is looked up in DynamoDB and " +
    "compared in constant time, then the route's permissions are checked (shared/http/middleware/authenticate.ts).",
  root:
    "Authenticated in the function: the SVC-API-KEY header's SHA-256 hash is compared in constant time with " +
    "the root key hash held in an SSM SecureString parameter.",
  none: "Public by design: readiness probe and the OpenAPI document carry no tenant data.",
};

/** JSON access log line: identifiers and outcome only, never headers (they carry SVC-API-KEY). */
export const ACCESS_LOG_FIELDS = {
  requestId: "$context.requestId",
  requestTime: "$context.requestTime",
  ip: "$context.identity.sourceIp",
  httpMethod: "$context.httpMethod",
  // The route, never the path: a path holds token ids, which an id expression can make the data itself.
  routeKey: "$context.routeKey",
  status: "$context.status",
  protocol: "$context.protocol",
  responseLength: "$context.responseLength",
  responseLatency: "$context.responseLatency",
  integrationStatus: "$context.integrationStatus",
  integrationLatency: "$context.integrationLatency",
  integrationError: "$context.integrationErrorMessage",
  error: "$context.error.message",
};

/**
 * The stateless half: one Lambda per function group, one API Gateway route per entry of the shared route
 * table (so the deployed routes cannot drift from what the handlers and the OpenAPI document know), and
 * the system function as the $default route, so unknown paths get a problem+json 404 or 405.
 */
export class VaultHttpApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly functions: Record<FunctionGroup, ApiFunction>;
  readonly accessLogs: LogGroup;
  /** What the tenants' runner functions (customer code, no grants) share: bundle, role, log group, prefix. */
  readonly sandboxRunners: SandboxRunners;
  /** The custom domain, when one was given: point its DNS at `regionalDomainName`. */
  readonly domainName?: DomainName;

  constructor(scope: Construct, id: string, props: VaultHttpApiProps) {
    super(scope, id);

    this.sandboxRunners = new SandboxRunners(this, "SandboxRunners", { logRetention: props.logRetention });
    const sandboxFunctions: [ApiFunction, SandboxAccess][] = [];
    const functions = {} as Record<FunctionGroup, ApiFunction>;
    const emailFunctions: ApiFunction[] = [];
    const integrations = {} as Record<FunctionGroup, HttpLambdaIntegration>;
    for (const group of FUNCTION_GROUPS) {
      const access = FUNCTION_ACCESS[group];
      const afterBundling = GROUP_AFTER_BUNDLING[group];
      const fn = new ApiFunction(this, `${pascal(group)}Function`, {
        group,
        logRetention: props.logRetention,
        ...(afterBundling ? { afterBundling } : {}),
      });
      fn.bindTable(props.table, access.table);
      if (access.rootKeyParameter) fn.bindRootKeyParameter(props.rootKeyParameterName);
      const keys = GROUP_DATA_KEYS[group];
      if (keys !== "none") fn.bindDataKey(props.dataKey, keys);
      if ("receiptKey" in access && access.receiptKey) fn.bindReceiptKey(props.receiptKey, access.receiptKey);
      if ("email" in access && access.email) emailFunctions.push(fn);
      if ("sandbox" in access && access.sandbox) sandboxFunctions.push([fn, access.sandbox]);
      functions[group] = fn;
      integrations[group] = new HttpLambdaIntegration(`${pascal(group)}Integration`, fn.function, {
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      });
    }
    this.functions = functions;

    this.api = new HttpApi(this, "Api", {
      apiName: props.apiName,
      description: "svc-vault data tokenization API",
      // The stage is created below, with access logging and throttling.
      createDefaultStage: false,
    });

    const defaultRoute = new HttpRoute(this, "RouteDefault", {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrations.system,
    });
    suppressNoAuthorizer(
      defaultRoute,
      "Unknown routes reach only the system function, which answers 404/405.",
    );

    for (const route of props.routes) {
      const httpRoute = new HttpRoute(this, `Route${pascal(route.operationId)}`, {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: integrations[route.group],
      });
      suppressNoAuthorizer(httpRoute, NO_AUTHORIZER_REASON[route.auth]);
    }
    // CORS preflights only on the paths whose routes opt in (shared/http/cors.ts), answered by the system
    // function; the API has no corsPreflight setting, which would answer CORS on every route.
    for (const preflight of preflightRoutes(props.routes)) {
      const httpRoute = new HttpRoute(
        this,
        `RoutePreflight${pascal(preflight.path.replace(/[^A-Za-z0-9]+/g, "_"))}`,
        {
          httpApi: this.api,
          routeKey: HttpRouteKey.with(preflight.path, HttpMethod.OPTIONS),
          integration: integrations.system,
        },
      );
      suppressNoAuthorizer(
        httpRoute,
        "CORS preflight: carries no key and no data; answers which methods and headers browsers may send.",
      );
    }

    this.accessLogs = new LogGroup(this, "AccessLogs", {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });
    this.stage = new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    if (props.domain) {
      this.domainName = new DomainName(this, "DomainName", {
        domainName: props.domain.name,
        certificate: props.domain.certificate,
      });
      new ApiMapping(this, "DomainMapping", {
        api: this.api,
        domainName: this.domainName,
        stage: this.stage,
      });
    }
    // apiEndpoint, not the stage URL: the stage depends on the routes, which depend on the functions.
    const base = props.domain ? `https://${props.domain.name}` : this.api.apiEndpoint;
    const invitationUrl = props.invitationUrl ?? `${base}/invitations/accept`;
    for (const fn of emailFunctions) fn.bindEmailSender(props.emailSender, invitationUrl);
    for (const [fn, access] of sandboxFunctions)
      this.sandboxRunners.bind(fn, access, access === "run" ? this.api.apiEndpoint : undefined);
  }

  /** Base URL of the default stage (ends with a slash). */
  get url(): string {
    return this.stage.url;
  }
}

/** On the route's own CfnRoute only, naming the route key, so each suppression says what it covers. */
function suppressNoAuthorizer(route: HttpRoute, reason: string): void {
  const cfnRoute = route.node.defaultChild as CfnRoute;
  Validations.of(cfnRoute).acknowledge({
    id: "AwsSolutions-APIG4",
    reason: `${cfnRoute.routeKey}: ${reason}`,
  });
}

function pascal(name: string): string {
  return name.replace(/(^|[-_])(\w)/g, (_, __, c: string) => c.toUpperCase());
}
