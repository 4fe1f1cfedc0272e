import { METRIC_SERVICE, METRIC_SPEC } from "./metric-names.ts";

const BEGIN =
  "<!-- metrics:begin (npm run docs:env writes this table from shared/observability/metric-names.ts) -->";
const END = "<!-- metrics:end -->";

/** docs/operations.md's metric table: each metric of METRIC_SPEC, its unit and its dimensions. */
export function renderMetricTable(): string {
  const rows = Object.entries(METRIC_SPEC).map(([name, spec]) => {
    const dimensions = ["service", ...spec.dimensions].map((d) => `\`${d}\``).join(", ");
    return `| \`${name}\` | ${spec.unit} | ${dimensions} | ${spec.description} |`;
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
