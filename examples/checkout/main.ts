/**
 * `npm run example:checkout`: against a running vault (SVC_PROXY_ALLOW_PRIVATE=1 npm start, so its proxy may
 * reach the fake processor on 127.0.0.1), creates a tenant with a public application for the page (listing the
 * page's origin), a private one for the back end and a proxy to the processor, then serves the checkout page.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Charge, fakeProcessor } from "./processor.ts";
import { merchantServer } from "./server.ts";

export interface Checkout {
  url: string;
  charges: Charge[];
  /** The bodies the merchant's back end received. */
  received: string[];
  close(): Promise<void>;
}

const listen = (server: Server, port: number) =>
  new Promise<string>((resolve) =>
    server.listen(port, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

async function vault(vaultUrl: string, path: string, key: string, body: unknown) {
  const res = await fetch(`${vaultUrl}${path}`, {
    method: "POST",
    headers: { "svc-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as Record<string, string>;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${answer.detail ?? ""}`);
  return answer;
}

export async function startCheckout(options: {
  vaultUrl: string;
  rootKey: string;
  port?: number;
}): Promise<Checkout> {
  const { vaultUrl, rootKey } = options;
  const charges: Charge[] = [];
  const received: string[] = [];
  const processor = fakeProcessor(charges);
  const processorUrl = await listen(processor, 0);
  const tenant = await vault(vaultUrl, "/tenants", rootKey, { name: "Example shop" });
  const owner = tenant.management_key as string;
  // The page's origin must be listed by its application: serve first, then configure.
  const config = { vaultUrl, publicKey: "", privateKey: "", proxyKey: "" };
  const server = merchantServer(config, received);
  const url = await listen(server, options.port ?? 0);
  const page = await vault(vaultUrl, "/applications", owner, {
    name: "checkout page",
    type: "public",
    permissions: ["token:create"],
    allowed_origins: [url],
  });
  const backEnd = await vault(vaultUrl, "/applications", owner, {
    name: "checkout back end",
    type: "private",
    permissions: ["token:use"],
  });
  const proxy = await vault(vaultUrl, "/proxies", owner, {
    name: "processor",
    destination_url: processorUrl,
  });
  Object.assign(config, { publicKey: page.key, privateKey: backEnd.key, proxyKey: proxy.key });
  return {
    url,
    charges,
    received,
    close: async () => {
      server.closeAllConnections();
      processor.closeAllConnections();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => processor.close(r))]);
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const vaultUrl = process.env.SVC_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  const rootKeyFile = `${process.env.SVC_DATA_DIR ?? ".svc-data"}/root-key`;
  const rootKey =
    process.env.SVC_ROOT_KEY ?? (existsSync(rootKeyFile) ? readFileSync(rootKeyFile, "utf8").trim() : "");
  const checkout = await startCheckout({
    vaultUrl,
    rootKey,
    port: Number(process.env.CHECKOUT_PORT ?? 4000),
  }).catch((error: unknown) => {
    console.error(`No checkout: ${error instanceof Error ? error.message : error}.`);
    console.error(
      `Is the vault running at ${vaultUrl} (SVC_PROXY_ALLOW_PRIVATE=1 npm start), with its root key?`,
    );
    process.exit(1);
  });
  console.log(
    `Checkout page: ${checkout.url} (vault ${vaultUrl}). Try 4242 4242 4242 4242, any future date.`,
  );
}
