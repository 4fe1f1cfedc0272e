/**
 * Which tenant runner functions an operator may delete after a deploy (scripts/prune-sandbox-runners.ts).
 * A function's name is `<prefix><tenant id>-<version>`; a deploy that changes the runner's definition gives
 * every tenant a new one on its next run and leaves the old one idle. Per tenant the most recently created
 * function is kept, and so is anything younger than `minAgeMs`: during a rolling deploy old containers may
 * still invoke the previous version. Deleting a function still in use is harmless: it is created again.
 */
export interface RunnerFunctionInfo {
  name: string;
  /** Lambda's LastModified (ISO 8601); runner functions are never updated, so this is their creation. */
  lastModified: string;
}

const NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-([0-9a-f]{8})$/;

export function staleRunnerFunctions(
  prefix: string,
  functions: RunnerFunctionInfo[],
  now: Date,
  minAgeMs: number,
): string[] {
  const byTenant = new Map<string, RunnerFunctionInfo[]>();
  for (const fn of functions) {
    if (!fn.name.startsWith(prefix)) continue;
    const tenant = NAME.exec(fn.name.slice(prefix.length))?.[1];
    if (!tenant) continue;
    byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), fn]);
  }
  const stale: string[] = [];
  for (const list of byTenant.values()) {
    const [, ...older] = [...list].sort((a, b) => Date.parse(b.lastModified) - Date.parse(a.lastModified));
    for (const fn of older) if (now.getTime() - Date.parse(fn.lastModified) >= minAgeMs) stale.push(fn.name);
  }
  return stale.sort();
}
