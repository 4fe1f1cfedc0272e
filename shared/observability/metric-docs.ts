import { METRIC_SERVICE, METRIC_SPEC, type MetricName } from "./metric-names.ts";

/** What each metric counts or times: documentation only (docs/operations.md), so no function bundles it. */
export const METRIC_DESCRIPTIONS: Record<MetricName, string> = {
  Requests: "API requests answered",
  Responses4xx: "answers 400–499 (429 included)",
  Responses5xx: "answers 500–599 (503 outages included)",
  Latency: "request time through the whole chain",
  TokensCreated:
    "tokens created (batch: each token, counted by the sweep when it finishes a batch whose request died; in a transaction: when it commits, none if it rolls back)",
  TokensRead: "tokens read (get, list, search: each token shown)",
  TokensDetokenized: "tokens a detokenization used (proxies, reactors, POST /detokenize)",
  ProxyDestinationLatency: "a proxy destination's round trip",
  ProxyDestinationResponses:
    "proxy destination answers: 2xx…5xx, or `error` (none: refused, timeout, unreachable)",
  SandboxRunDuration: "one run of tenant code",
  SandboxRefusals: "runs of tenant code stopped by a limit (time, memory, size)",
  RateLimitRefusals: "requests refused 429 by a rate limit (request or search budget)",
  CallbackRecords: "callback queue records: `delivered`, `retry` (back to the queue), `dead_letter`",
  SweepRuns: "sweep runs (each 15 minutes in AWS)",
  SweepTokensDeleted: "tokens a sweep deleted at their expiry",
  SweepItemsPutOff: "due items a sweep could not process and put off (retried later; alarmed)",
};

const BEGIN =
  "<!-- metrics:begin (npm run docs:env writes this table from shared/observability/metric-docs.ts) -->";
const END = "<!-- metrics:end -->";

/** docs/operations.md's metric table: each metric of METRIC_SPEC, its unit, dimensions and description. */
export function renderMetricTable(): string {
  const rows = Object.entries(METRIC_SPEC).map(([name, spec]) => {
    const dimensions = ["service", ...spec.dimensions].map((d) => `\`${d}\``).join(", ");
    return `| \`${name}\` | ${spec.unit} | ${dimensions} | ${METRIC_DESCRIPTIONS[name as MetricName]} |`;
  });
  return [
    `| metric | unit | dimensions (\`service\` = \`${METRIC_SERVICE}\`) | what it counts or times |`,
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** `markdown` with the table between its markers written anew. */
export function replaceMetricTable(markdown: string): string {
  const start = markdown.indexOf(BEGIN);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the markers ${BEGIN} … ${END} are missing`);
  return `${markdown.slice(0, start + BEGIN.length)}\n${renderMetricTable()}\n${markdown.slice(end)}`;
}
