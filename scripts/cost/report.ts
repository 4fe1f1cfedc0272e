/** The cost run's figures per operation, their price per million requests, and the tables printed from them. */
import type { SampleUsage } from "./measure.ts";
import { PRICES } from "./prices.ts";

export interface OperationFigures {
  name: string;
  samples: number;
  tokensPerRequest: number;
  /** Means per request. */
  readUnits: number;
  writeUnits: number;
  itemsPut: number;
  /** Mean size of an item put, bytes (0 when nothing is put). */
  itemBytes: number;
  tableCalls: number;
  serialCalls: number;
  cpuMs: number;
  kmsCalls: number;
  sqsMessages: number;
  codeRuns: number;
  codeRunMs: number;
  lambdaInvocations: number;
  logBytes: number;
  /** Dollars per million requests, by line; lambda and total as low and high. */
  price: {
    apiGateway: number;
    lambdaLow: number;
    lambdaHigh: number;
    dynamodb: number;
    kms: number;
    sqs: number;
    logs: number;
    xray: number;
    totalLow: number;
    totalHigh: number;
  };
}

const mean = (samples: SampleUsage[], pick: (s: SampleUsage) => number) =>
  samples.reduce((sum, s) => sum + pick(s), 0) / Math.max(1, samples.length);

/** Lambda duration per request, ms, low and high (docs/scale.md, "How it is produced"). */
export function durations(cpuMs: number, serialCalls: number, memoryMb: number) {
  const stretch = Math.max(1, PRICES.lambda.fullVcpuMemoryMb / memoryMb);
  return { low: cpuMs, high: cpuMs * stretch + serialCalls * PRICES.dynamodbRoundTripMs };
}

export function figures(
  name: string,
  tokensPerRequest: number,
  samples: SampleUsage[],
  memory: { apiMb: number; runnerMb: number },
): OperationFigures {
  const m = (pick: (s: SampleUsage) => number) => mean(samples, pick);
  const itemsPut = m((s) => s.itemsPut);
  const cpuMs = m((s) => s.cpuMs);
  const serialCalls = m((s) => s.serialCalls);
  const codeRuns = m((s) => s.sandboxRuns);
  const codeRunMs = m((s) => s.sandboxMs);
  const invocations = m((s) => s.invocations);
  const jobRuns = m((s) => s.jobRuns);
  const lambdaInvocations = invocations + jobRuns + codeRuns;
  const readUnits = m((s) => s.readUnits);
  const writeUnits = m((s) => s.writeUnits);
  const kmsCalls = m((s) => s.keyWrapperCalls);
  const sqsMessages = m((s) => s.jobsQueued);
  const logBytes =
    m((s) => s.functionLogBytes + s.accessLogBytes) +
    lambdaInvocations * PRICES.cloudWatchLogs.platformLineBytes;

  const { low, high } = durations(cpuMs, serialCalls, memory.apiMb);
  // The API function waits for a runner's answer: billed in both; the runner itself at its own memory.
  const gbSecond = (ms: number, mb: number) =>
    (ms / 1000) * (mb / 1024) * PRICES.lambda.perGbSecondArm64 * 1e6;
  const lambdaFixed =
    lambdaInvocations * PRICES.lambda.perMillionRequests +
    gbSecond(codeRunMs, memory.apiMb) +
    gbSecond(codeRunMs, memory.runnerMb);
  const price = {
    apiGateway: invocations * PRICES.apiGateway.perMillionRequests,
    lambdaLow: lambdaFixed + gbSecond(low, memory.apiMb),
    lambdaHigh: lambdaFixed + gbSecond(high, memory.apiMb),
    dynamodb:
      readUnits * PRICES.dynamodb.perMillionReadUnits + writeUnits * PRICES.dynamodb.perMillionWriteUnits,
    kms: kmsCalls * PRICES.kms.perMillionRequests,
    sqs: sqsMessages * PRICES.sqs.requestsPerMessage * PRICES.sqs.perMillionRequests,
    logs: (logBytes / 1e9) * PRICES.cloudWatchLogs.perGbIngested * 1e6,
    xray: PRICES.xray.sampledShare * PRICES.xray.perMillionTraces,
    totalLow: 0,
    totalHigh: 0,
  };
  const rest = price.apiGateway + price.dynamodb + price.kms + price.sqs + price.logs + price.xray;
  price.totalLow = rest + price.lambdaLow;
  price.totalHigh = rest + price.lambdaHigh;
  return {
    name,
    samples: samples.length,
    tokensPerRequest,
    readUnits,
    writeUnits,
    itemsPut,
    itemBytes: itemsPut > 0 ? m((s) => s.itemBytesPut) / itemsPut : 0,
    tableCalls: m((s) => s.calls),
    serialCalls,
    cpuMs,
    kmsCalls,
    sqsMessages,
    codeRuns,
    codeRunMs,
    lambdaInvocations,
    logBytes,
    price,
  };
}

const n = (value: number, digits = 2) =>
  value === 0 ? "0" : Number.isInteger(value) ? String(value) : value.toFixed(digits);
const usd = (value: number) => `$${value.toFixed(2)}`;

/** The two tables: what each request uses, and what a million of them cost. */
export function tables(all: OperationFigures[]): { title: string; header: string[]; rows: string[][] }[] {
  return [
    {
      title: "Per request (means)",
      header: [
        "operation",
        "RCU",
        "WCU",
        "items put × bytes",
        "table calls (serial)",
        "CPU ms",
        "KMS calls",
        "SQS msgs",
        "code runs",
        "log bytes",
      ],
      rows: all.map((f) => [
        f.name,
        n(f.readUnits),
        n(f.writeUnits),
        f.itemsPut ? `${n(f.itemsPut, 1)} × ${Math.round(f.itemBytes)}` : "0",
        `${n(f.tableCalls, 1)} (${n(f.serialCalls, 1)})`,
        n(f.cpuMs),
        n(f.kmsCalls, 3),
        n(f.sqsMessages),
        n(f.codeRuns),
        String(Math.round(f.logBytes)),
      ]),
    },
    {
      title: `$ per million requests, ${PRICES.region}, list prices of ${PRICES.asOf}`,
      header: [
        "operation",
        "API Gateway",
        "Lambda low–high",
        "DynamoDB",
        "KMS",
        "SQS",
        "Logs",
        "X-Ray",
        "total low–high",
        "per M tokens",
      ],
      rows: all.map((f) => [
        f.name,
        usd(f.price.apiGateway),
        `${usd(f.price.lambdaLow)}–${usd(f.price.lambdaHigh)}`,
        usd(f.price.dynamodb),
        usd(f.price.kms),
        usd(f.price.sqs),
        usd(f.price.logs),
        usd(f.price.xray),
        `${usd(f.price.totalLow)}–${usd(f.price.totalHigh)}`,
        f.tokensPerRequest > 1
          ? `${usd(f.price.totalLow / f.tokensPerRequest)}–${usd(f.price.totalHigh / f.tokensPerRequest)}`
          : "",
      ]),
    },
  ];
}

export function markdown(table: { title: string; header: string[]; rows: string[][] }): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    `**${table.title}**`,
    "",
    line(table.header),
    line(table.header.map(() => "---")),
    ...table.rows.map(line),
  ].join("\n");
}

export function text(table: { title: string; header: string[]; rows: string[][] }): string {
  const widths = table.header.map((h, i) =>
    Math.max(h.length, ...table.rows.map((r) => (r[i] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  return [
    table.title,
    line(table.header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...table.rows.map(line),
  ].join("\n");
}
