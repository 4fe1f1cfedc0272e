/**
 * `npm run docs:env`: writes docs/operations.md's configuration table from shared/config-docs.ts (whose type follows
 * shared/config.ts's schema), and its metric table from shared/observability/metric-names.ts. Run it after adding
 * or changing a variable or a metric; a unit test fails until it is run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { replaceConfigTable } from "#shared/config-docs.ts";
import { replaceMetricTable } from "#shared/observability/metric-docs.ts";

const OPERATIONS_PATH = new URL("../docs/operations.md", import.meta.url);

writeFileSync(OPERATIONS_PATH, replaceMetricTable(replaceConfigTable(readFileSync(OPERATIONS_PATH, "utf8"))));
console.log(`wrote ${OPERATIONS_PATH.pathname}`);
