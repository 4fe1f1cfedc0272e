import { handler as applications } from "#functions/applications/handler.ts";
import { handler as logs } from "#functions/logs/handler.ts";
import { handler as members } from "#functions/members/handler.ts";
import { handler as proxies } from "#functions/proxies/handler.ts";
import { handler as proxy } from "#functions/proxy/handler.ts";
import { handler as reactors } from "#functions/reactors/handler.ts";
import { handler as sessions } from "#functions/sessions/handler.ts";
import { handler as system } from "#functions/system/handler.ts";
import { handler as tenants } from "#functions/tenants/handler.ts";
import { handler as tokens } from "#functions/tokens/handler.ts";
import { handler as transactions } from "#functions/transactions/handler.ts";
import type { FunctionGroup } from "#shared/http/route.ts";
import type { HttpLambda } from "./gateway.ts";

/** The same handlers the Lambdas export, one per function group. */
export const groupHandlers: Record<FunctionGroup, HttpLambda> = {
  system,
  tenants,
  applications,
  logs,
  tokens,
  transactions,
  sessions,
  members,
  proxies,
  proxy,
  reactors,
};
