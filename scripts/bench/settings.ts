/** The bench's settings from the environment (see scripts/bench.ts), its log line, and the card it tokenizes. */
import { randomInt } from "node:crypto";
import { intEnv } from "../int-env.ts";

/** Each has its module under scenarios/. */
export type Scenario =
  | "tokenize"
  | "read"
  | "proxy"
  | "react"
  | "react-outbound"
  | "runner-cold-start"
  | "bundles"
  | "elements"
  | "search"
  | "tokenize-batch"
  | "import";
export const SCENARIOS: Scenario[] = [
  "tokenize",
  "read",
  "proxy",
  "react",
  "react-outbound",
  "runner-cold-start",
  "bundles",
  "elements",
  "search",
  "tokenize-batch",
  "import",
];
/** Scenarios that start processes of their own and need no service. */
export const STANDALONE_SCENARIOS: Scenario[] = ["bundles", "runner-cold-start"];

export const CARD = { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 };

export const settings = {
  durationSeconds: intEnv("BENCH_DURATION_S", 5, 1, 600),
  rounds: intEnv("BENCH_ROUNDS", 3, 1, 50),
  warmupSeconds: intEnv("BENCH_WARMUP_S", 8, 0, 600),
  connections: intEnv("BENCH_CONNECTIONS", 16, 1, 1024),
  seedTokens: intEnv("BENCH_SEED_TOKENS", 200, 1, 100_000),
  cards: (process.env.BENCH_CARDS || "fixed") as "fixed" | "unique",
  scenarios: (process.env.BENCH_SCENARIOS || SCENARIOS.join(","))
    .split(",")
    .map((s) => s.trim()) as Scenario[],
  latencySamples: intEnv("BENCH_LATENCY_SAMPLES", 200, 1, 100_000),
  newProxies: intEnv("BENCH_NEW_PROXIES", 10, 1, 100),
  searchSmall: intEnv("BENCH_SEARCH_SMALL", 200, 1, 100_000),
  searchLarge: intEnv("BENCH_SEARCH_LARGE", 5000, 1, 1_000_000),
  searchSamples: intEnv("BENCH_SEARCH_SAMPLES", 100, 1, 100_000),
  elementsMounts: intEnv("BENCH_ELEMENTS_MOUNTS", 20, 1, 1000),
  nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean),
  trace: process.env.BENCH_TRACE === "1",
};
if (settings.cards !== "fixed" && settings.cards !== "unique")
  throw new Error(`BENCH_CARDS must be fixed or unique, got ${settings.cards}`);
for (const scenario of settings.scenarios)
  if (!SCENARIOS.includes(scenario))
    throw new Error(`BENCH_SCENARIOS lists some of ${SCENARIOS.join(", ")}, got ${scenario}`);
export const floorScenarios = settings.scenarios.filter((s) => s === "tokenize" || s === "read");

export const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** A Luhn-valid 16-digit Visa-like number, so that BENCH_CARDS=unique creates pass validation. */
function randomCardNumber(): string {
  const digits = [4, ...Array.from({ length: 14 }, () => randomInt(10))];
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Counting from the check digit (position 0, at the right end), every odd position is doubled.
    let d = digits[digits.length - 1 - i] as number;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return [...digits, (10 - (sum % 10)) % 10].join("");
}

export const cardBody = () =>
  JSON.stringify({
    type: "card",
    data: settings.cards === "unique" ? { ...CARD, number: randomCardNumber() } : CARD,
  });
