/**
 * `npx tsx scripts/prune-sandbox-runners.ts --prefix <SandboxRunnerPrefix output> [--min-age-hours 24] [--delete]`
 * Lists (and with --delete, deletes) tenant runner functions left behind by deploys that changed the runner:
 * per tenant all but the newest, older than --min-age-hours. Runs with the operator's credentials
 * (lambda:ListFunctions, lambda:DeleteFunction); the service itself is never granted DeleteFunction.
 * Region and credentials come from the usual AWS environment (AWS_REGION, AWS_PROFILE, ...).
 */
import { parseArgs } from "node:util";
import { DeleteFunctionCommand, LambdaClient, paginateListFunctions } from "@aws-sdk/client-lambda";
import { PREFIX_PATTERN } from "#shared/adapters/aws/runner-functions.ts";
import { type RunnerFunctionInfo, staleRunnerFunctions } from "#shared/adapters/aws/runner-pruning.ts";

const { values } = parseArgs({
  options: {
    prefix: { type: "string" },
    "min-age-hours": { type: "string", default: "24" },
    delete: { type: "boolean", default: false },
  },
});
const prefix = values.prefix ?? "";
const minAgeHours = Number(values["min-age-hours"]);
if (!PREFIX_PATTERN.test(prefix) || !(minAgeHours >= 0)) {
  console.error("usage: prune-sandbox-runners.ts --prefix <prefix> [--min-age-hours 24] [--delete]");
  process.exit(2);
}

const lambda = new LambdaClient({});
const functions: RunnerFunctionInfo[] = [];
for await (const page of paginateListFunctions({ client: lambda }, {}))
  for (const fn of page.Functions ?? [])
    if (fn.FunctionName?.startsWith(prefix) && fn.LastModified)
      functions.push({ name: fn.FunctionName, lastModified: fn.LastModified });

const stale = staleRunnerFunctions(prefix, functions, new Date(), minAgeHours * 3_600_000);
console.log(`${functions.length} runner functions, ${stale.length} stale`);
for (const name of stale) {
  if (values.delete) await lambda.send(new DeleteFunctionCommand({ FunctionName: name }));
  console.log(`${values.delete ? "deleted" : "would delete"} ${name}`);
}
