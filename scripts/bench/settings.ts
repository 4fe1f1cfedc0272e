/** The bench's settings from the environment (see scripts/bench.ts), its log line, and the card it tokenizes. */
import { intEnv } from "../int-env.ts";

/** Each answers a question of docs/performance.md; tokenize and read are the default. */
export const SCENARIOS = ["tokenize", "read", "proxy", "search", "tokenize-batch", "rewrap"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const CARD = { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 };
export const cardBody = () => JSON.stringify({ type: "card", data: CARD });

export const settings = {
  durationSeconds: intEnv("BENCH_DURATION_S", 5, 1, 600),
  rounds: intEnv("BENCH_ROUNDS", 9, 1, 50),
  warmupSeconds: intEnv("BENCH_WARMUP_S", 8, 0, 600),
  connections: intEnv("BENCH_CONNECTIONS", 16, 1, 1024),
  seedTokens: intEnv("BENCH_SEED_TOKENS", 200, 1, 100_000),
  scenarios: (process.env.BENCH_SCENARIOS || "tokenize,read").split(",").map((s) => s.trim()) as Scenario[],
  newProxies: intEnv("BENCH_NEW_PROXIES", 10, 1, 100),
  searchSmall: intEnv("BENCH_SEARCH_SMALL", 200, 1, 100_000),
  searchLarge: intEnv("BENCH_SEARCH_LARGE", 5000, 1, 1_000_000),
  searchSamples: intEnv("BENCH_SEARCH_SAMPLES", 100, 1, 100_000),
  rewrapTokens: intEnv("BENCH_REWRAP_TOKENS", 2000, 1, 1_000_000),
  nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean),
  trace: process.env.BENCH_TRACE === "1",
};
for (const scenario of settings.scenarios)
  if (!SCENARIOS.includes(scenario))
    throw new Error(`BENCH_SCENARIOS lists some of ${SCENARIOS.join(", ")}, got ${scenario}`);

export const wants = (...scenarios: Scenario[]) => scenarios.some((s) => settings.scenarios.includes(s));

export const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
