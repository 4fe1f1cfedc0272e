import type { Server, ServerResponse } from "node:http";

export interface Drainer {
  /** Requests received and not yet answered. */
  inFlight(): number;
  /**
   * Stops accepting connections, lets the requests in flight finish for up to `graceMs`, then cuts what is
   * left. Answers how many requests were cut (0 when all finished in time).
   */
  drain(graceMs: number): Promise<number>;
}

/**
 * Graceful shutdown of the local gateway. A request in flight when SIGTERM arrives may already have written to
 * the store: cutting it would hand the client a reset for a write that happened, so it is answered first.
 * Connections idle between requests are closed at once, and each keep-alive connection as soon as its last
 * answer is sent (its answer carries `Connection: close`).
 */
export function drainable(server: Server): Drainer {
  const open = new Set<ServerResponse>();
  let closing = false;
  let settled: (() => void) | undefined;
  server.on("request", (_req, res: ServerResponse) => {
    open.add(res);
    if (closing) res.shouldKeepAlive = false;
    res.once("close", () => {
      open.delete(res);
      if (!closing) return;
      server.closeIdleConnections();
      if (open.size === 0) settled?.();
    });
  });
  const inFlight = () => open.size;
  return {
    inFlight,
    drain: async (graceMs) => {
      closing = true;
      // Each answer still to come closes its connection instead of keeping it alive for another request.
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight() > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => {
            settled = resolve;
          }),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, graceMs);
          }),
        ]);
        clearTimeout(timer);
      }
      const cut = inFlight();
      server.closeAllConnections();
      await closed;
      return cut;
    },
  };
}
