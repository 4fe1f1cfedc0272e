import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Every project's first global setup: the run's temporary files (data directories, key files, CLI state, browser
 * profiles) go under one directory of the run's own, TMPDIR for the workers and every process they start, and it
 * is removed when the run ends. Left in the system's, a run left some 300 directories and key files behind.
 */
export default function setup() {
  if (process.env.SVC_TEST_SCRATCH) return;
  const dir = mkdtempSync(join(tmpdir(), "svc-test-run-"));
  process.env.SVC_TEST_SCRATCH = dir;
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
