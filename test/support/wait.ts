/**
 * How long a started service may take before a test gives up: Java, DynamoDB Local and the sandbox's first process
 * take a few seconds on a quiet machine and many times that on a loaded CI machine; a bound, not a speed target.
 */
export const READY_MS = 120_000;

/** Resolves once `predicate` holds, polling every 100 ms; rejects with "timed out" after `timeoutMs`. */
export function waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (predicate()) return resolve();
      if (Date.now() > deadline) return reject(new Error("timed out"));
      setTimeout(tick, 100);
    };
    tick();
  });
}

/** A promise and the function that settles it: a gate a test opens when it chooses. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
