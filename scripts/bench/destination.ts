/**
 * The proxy scenario's destination: a tiny node:http server on 127.0.0.1 that reads the request body and
 * answers a small JSON: at once, or SLOW_ANSWER_MS later for a path under SLOW_PATH_PREFIX (a destination that
 * does some work of its own, as a payment API does). It runs in its own child process
 * (scripts/bench/target-process.ts `destination`), so it shares neither the service's nor the load generator's
 * event loop.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const ANSWER = JSON.stringify({ id: "ch_bench", status: "succeeded", amount: 1200 });
const ANSWER_BYTES = Buffer.byteLength(ANSWER);

/** Requests to a path under this prefix are answered SLOW_ANSWER_MS after their body has arrived. */
export const SLOW_PATH_PREFIX = "/slow";
export const SLOW_ANSWER_MS = 20;

export async function startDestination(options: { port?: number; host?: string } = {}) {
  const host = options.host ?? "127.0.0.1";
  const server: Server = createServer((req, res) => {
    req.resume();
    const answer = () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": ANSWER_BYTES });
      res.end(ANSWER);
    };
    const slow = req.url?.startsWith(`${SLOW_PATH_PREFIX}/`) === true;
    req.on("end", () => (slow ? setTimeout(answer, SLOW_ANSWER_MS) : answer()));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
