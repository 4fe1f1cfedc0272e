/**
 * tokenize and read: the service against its floor (floor-service.ts), each seeded with the same card tokens; the
 * service's req/s must reach a share of the floor's (summary.ts COMPARISONS).
 */
import { call } from "../../api-call.ts";
import { runLoad } from "../load.ts";
import type { LoadTarget } from "../runs.ts";
import { seed } from "../service-setup.ts";
import { cardBody, log, settings } from "../settings.ts";
import type { RunningTarget } from "../targets.ts";

/** Floor and service targets of `scenario`, seeded with BENCH_SEED_TOKENS cards each. */
export async function floorAndService(
  floor: RunningTarget,
  service: RunningTarget,
  keys: { create: string; read: string },
): Promise<(scenario: "tokenize" | "read") => LoadTarget[]> {
  log(`seeding ${settings.seedTokens} card tokens in each target…`);
  const [serviceIds, floorIds] = await Promise.all([
    seed(service.url, keys.create, settings.seedTokens),
    seed(floor.url, undefined, settings.seedTokens),
  ]);
  // One read of each, so that a broken read path fails here rather than after the tokenize scenario.
  await call(service.url, "GET", `/tokens/${serviceIds[0]}`, keys.read, undefined, 200);
  await call(floor.url, "GET", `/tokens/${floorIds[0]}`, undefined, undefined, 200);
  const target = (
    scenario: "tokenize" | "read",
    running: RunningTarget,
    ids: string[],
    key?: string,
  ): LoadTarget => {
    const headers: Record<string, string> = key ? { "svc-api-key": key } : {};
    let next = 0;
    return {
      label: running.name,
      pid: running.pid,
      traced: running,
      load: (durationSeconds) =>
        scenario === "tokenize"
          ? runLoad({
              url: running.url,
              connections: settings.connections,
              durationSeconds,
              headers: { ...headers, "content-type": "application/json" },
              method: "POST",
              path: () => "/tokens",
              body: cardBody,
            })
          : runLoad({
              url: running.url,
              connections: settings.connections,
              durationSeconds,
              headers,
              method: "GET",
              path: () => `/tokens/${encodeURIComponent(ids[next++ % ids.length] as string)}`,
            }),
    };
  };
  return (scenario) => [
    target(scenario, floor, floorIds),
    target(scenario, service, serviceIds, scenario === "tokenize" ? keys.create : keys.read),
  ];
}
