import type { Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";

export interface Drainer {
  /** Requests received and not yet answered. */
  inFlight(): number;
  /**
   * Stops accepting connections, lets the requests in flight finish for up to `graceMs`, then cuts what is
   * left. Answers how many requests were cut (0 when all finished in time).
   */
  drain(graceMs: number): Promise<number>;
}

/** After the last answer, how long connections stay open for a request a client may already have sent. */
export const LINGER_MS = 250;

/**
 * Graceful shutdown of the local gateway. A request in flight when SIGTERM arrives may already have written to
 * the store: cutting it would hand the client a reset for a write that happened, so it is answered first.
 * The listener closes at once (new connections are refused); open connections stay until every request on them
 * is answered, each answer with `Connection: close`, and then LINGER_MS more, so a request a client sent on a
 * keep-alive connection just before the signal is read and answered rather than reset.
 */
export function drainable(server: Server): Drainer {
  const open = new Set<ServerResponse>();
  let closing = false;
  let received = 0;
  let changed: (() => void) | undefined;
  // One listener for every response ('close' comes once per response): no closure or once-wrapper per request.
  function answered(this: ServerResponse): void {
    open.delete(this);
    if (open.size === 0) changed?.();
  }
  server.on("request", (_req, res: ServerResponse) => {
    open.add(res);
    received += 1;
    if (closing) res.shouldKeepAlive = false;
    res.on("close", answered);
  });
  const inFlight = () => open.size;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  return {
    inFlight,
    drain: async (graceMs) => {
      closing = true;
      // Each answer still to come closes its connection instead of keeping it alive for another request.
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
      // net.Server's close stops listening only; http.Server's would also close idle keep-alive connections at
      // once, and a request already sent on one, not yet read, would meet a reset.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline) {
        if (inFlight() > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            new Promise<void>((resolve) => {
              changed = resolve;
            }),
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, deadline - Date.now());
            }),
          ]);
          clearTimeout(timer);
          continue;
        }
        const before = received;
        await sleep(Math.min(LINGER_MS, Math.max(0, deadline - Date.now())));
        if (received === before && inFlight() === 0) break;
      }
      const cut = inFlight();
      server.closeAllConnections();
      await closed;
      // http.Server's own close clears its header-timeout timer (the listener is already closed).
      server.close(() => undefined);
      return cut;
    },
  };
}
