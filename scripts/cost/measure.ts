/**
 * The cost run's measuring gateway: the local gateway (shared/local/gateway.ts) over the service's own handlers,
 * each handler call wrapped to sum what a Lambda invocation would be billed for: its CPU time
 * (process.cpuUsage around the handler, one request at a time, so nothing else runs meanwhile), the bytes it logs,
 * and the API Gateway access log line it would cause.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type LocalService, localHandlers } from "#functions/local.ts";
import { ACCESS_LOG_FIELDS } from "#lib/constructs/http-api.ts";
import { routeList } from "#shared/api/index.ts";
import type { Usage, UsageMeter } from "#shared/composition/usage-meter.ts";
import type { FunctionGroup } from "#shared/http/route.ts";
import { createGateway, type HttpLambda } from "#shared/local/gateway.ts";
import type { Measure } from "./operations.ts";

/** What one sample used: the meter's counts and what the gateway saw. */
export interface SampleUsage extends Usage {
  /** API function invocations (API Gateway requests). */
  invocations: number;
  /** CPU of the API functions' handlers and of queued jobs' runs, ms. */
  cpuMs: number;
  /** Bytes the functions logged (the service's JSON lines). */
  functionLogBytes: number;
  /** Bytes of the API Gateway access log lines (ACCESS_LOG_FIELDS, rendered). */
  accessLogBytes: number;
  /** Queued jobs run (an SQS-triggered function invocation each in AWS). */
  jobRuns: number;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** The access log line API Gateway would write for this request (lib/constructs/http-api.ts's format). */
function accessLogLine(
  event: Parameters<HttpLambda>[0],
  status: number,
  responseBytes: number,
  latencyMs: number,
): string {
  const values: Record<string, string> = {
    "$context.requestId": event.requestContext.requestId.slice(0, 16),
    "$context.requestTime": "26/Nov/2026:08:00:00 +0000",
    "$context.identity.sourceIp": "203.0.113.10",
    "$context.httpMethod": event.requestContext.http.method,
    "$context.path": event.rawPath,
    "$context.routeKey": event.routeKey,
    "$context.status": String(status),
    "$context.protocol": "HTTP/1.1",
    "$context.responseLength": String(responseBytes),
    "$context.responseLatency": String(Math.round(latencyMs)),
    "$context.integrationStatus": String(status),
    "$context.integrationLatency": String(Math.round(latencyMs)),
    "$context.integrationErrorMessage": "-",
    "$context.error.message": "-",
  };
  const line = Object.fromEntries(
    Object.entries(ACCESS_LOG_FIELDS).map(([name, variable]) => [name, values[variable] ?? "-"]),
  );
  return JSON.stringify(line);
}

/**
 * Starts the measuring gateway in front of `service`'s handlers. Its `measure` runs a sample's measured part and
 * adds what it used to `into`. The service's JSON log lines are counted and kept off the terminal.
 */
export async function startMeasuringGateway(service: LocalService, meter: UsageMeter) {
  let invocations = 0;
  let handlerCpu = 0;
  let logBytes = 0;
  let accessBytes = 0;
  let jobRuns = 0;
  let jobCpu = 0;

  const write = process.stdout.write.bind(process.stdout);
  // The service logs through the Powertools logger to stdout: count its JSON lines, show everything else.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (text.startsWith("{")) {
      logBytes += Buffer.byteLength(text);
      return true;
    }
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;

  const handlers = localHandlers(service.deps);
  const measured = Object.fromEntries(
    Object.entries(handlers).map(([group, handler]) => [
      group,
      (async (event, context) => {
        const started = process.cpuUsage();
        const wall = performance.now();
        const result = await handler(event, context);
        handlerCpu += cpuMs(started);
        invocations += 1;
        const body = result.body ?? "";
        accessBytes +=
          Buffer.byteLength(
            accessLogLine(event, result.statusCode ?? 200, Buffer.byteLength(body), performance.now() - wall),
          ) + 1;
        return result;
      }) satisfies HttpLambda,
    ]),
  ) as Record<FunctionGroup, HttpLambda>;

  const server: Server = createGateway(routeList, measured);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** Waits for the queued jobs, counting their CPU as the consumer function's. */
  const queueIdle = async () => {
    const queued = service.deps.localJobQueue.size;
    const started = process.cpuUsage();
    await service.deps.localJobQueue.idle();
    jobCpu += cpuMs(started);
    jobRuns += queued;
  };

  const take = (): SampleUsage => {
    const usage: SampleUsage = {
      ...meter.take(),
      invocations,
      cpuMs: handlerCpu + jobCpu,
      functionLogBytes: logBytes,
      accessLogBytes: accessBytes,
      jobRuns,
    };
    invocations = 0;
    handlerCpu = 0;
    logBytes = 0;
    accessBytes = 0;
    jobRuns = 0;
    jobCpu = 0;
    return usage;
  };

  /** A Measure adding each measured part's usage to `samples`. */
  const measureInto =
    (samples: SampleUsage[]): Measure =>
    async (work) => {
      take();
      const result = await work();
      samples.push(take());
      return result;
    };

  return {
    url,
    queueIdle,
    measureInto,
    stop: async () => {
      process.stdout.write = write;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
