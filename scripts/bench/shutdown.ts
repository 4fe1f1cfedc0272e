/** Shutdown: everything started is stopped in reverse order, on success, on error and on Ctrl-C. */
import { stopCurrentLoad } from "./load.ts";
import { log } from "./settings.ts";

const cleanups: (() => Promise<void>)[] = [];
let interrupted = false;

/** Registers a step to run at shutdown (the last registered runs first). */
export function onCleanUp(step: () => Promise<void>): void {
  cleanups.push(step);
}

export async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop() as () => Promise<void>;
    await step().catch((error: unknown) => console.error("clean-up step failed:", error));
  }
}

process.on("SIGINT", () => {
  if (interrupted) return;
  interrupted = true;
  log("interrupted: stopping…");
  stopCurrentLoad();
});

export function wasInterrupted(): boolean {
  return interrupted;
}

export function checkInterrupted(): void {
  if (interrupted) throw new Error("interrupted");
}
