import { afterAll } from "vitest";

/**
 * Sets `variables` in process.env for this test file, so the service it starts next (useService) reads them, and
 * restores what was there after the file's tests.
 */
export function useEnv(variables: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  afterAll(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
}
