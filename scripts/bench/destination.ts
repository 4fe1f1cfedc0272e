/**
 * The proxy scenario's destination: a tiny node:http server on 127.0.0.1 that reads the request body and answers
 * a small JSON at once. It runs in its own child process (target-process.ts `destination`), so it shares neither
 * the service's nor the load generator's event loop.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const ANSWER = JSON.stringify({ id: "ch_bench", status: "succeeded", amount: 1200 });

export async function startDestination() {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
