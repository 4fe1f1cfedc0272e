import { createServer } from "node:net";

/**
 * A port for a service a test starts itself (`npm start` in a child process): random below Linux's ephemeral
 * range (32768 and up), where the machine's own outgoing connections take their ports, and free right now.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
