import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP forwarder between the service and DynamoDB Local that a test can cut: the store "goes away" for the
 * service (refused or silent connections) while the run's DynamoDB Local keeps serving every other test file.
 */
export interface StoreLink {
  endpoint: string;
  /** "refuse": every connection is reset at once; "hang": accepted, never answered. */
  cut(mode?: "refuse" | "hang"): void;
  restore(): void;
  close(): Promise<void>;
}

export async function storeLink(target: string): Promise<StoreLink> {
  const { hostname, port } = new URL(target);
  let mode: "up" | "refuse" | "hang" = "up";
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    client.on("error", () => undefined);
    if (mode === "refuse") return client.resetAndDestroy();
    if (mode === "hang") return;
    const upstream = new Socket();
    open.add(upstream);
    upstream.once("close", () => open.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.connect(Number(port), hostname, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const listening = typeof address === "object" && address ? address.port : 0;
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    endpoint: `http://127.0.0.1:${listening}`,
    cut: (how = "refuse") => {
      mode = how;
      dropAll();
    },
    restore: () => {
      mode = "up";
    },
    close: async () => {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
