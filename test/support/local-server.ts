import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";

/** What the server does with one whole request (its body read first). */
export type LocalHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/**
 * An HTTP server on 127.0.0.1 for the length of the test file (a partner, a proxy destination, a callback
 * receiver), started before the file's tests and closed after them. `url` is its base URL once started.
 */
export function useLocalServer(handler: LocalHandler): { readonly url: string } {
  let server: Server | undefined;
  let url = "";
  beforeAll(async () => {
    const started = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => handler(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => started.listen(0, "127.0.0.1", resolve));
    server = started;
    url = `http://127.0.0.1:${(started.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server?.closeAllConnections();
    server?.close();
  });
  return {
    get url() {
      if (!url) throw new Error("the local server is used before it started (use it inside a test or hook)");
      return url;
    },
  };
}
