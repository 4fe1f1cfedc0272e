/** The merchant's back end: serves the checkout page and charges a token through the vault's proxy. */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";

export interface MerchantConfig {
  vaultUrl: string;
  /** Goes into the page: a public key, made for browsers. */
  publicKey: string;
  /** Stays here: a private key holding token:use, and the pre-configured proxy's key. */
  privateKey: string;
  proxyKey: string;
}

const page = readFileSync(new URL("index.html", import.meta.url), "utf8");

/** `config` is read per request (main.ts fills in the keys once the page's origin is known). */
export function merchantServer(config: MerchantConfig, received: string[] = []): Server {
  return createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/") {
      const html = page
        .replaceAll("%VAULT_URL%", config.vaultUrl)
        .replaceAll("%PUBLIC_KEY%", config.publicKey);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
      return;
    }
    if (req.method !== "POST" || req.url !== "/pay") return void res.writeHead(404).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    received.push(body); // all this back end ever sees: {"token_id": "..."}
    const { token_id } = JSON.parse(body) as { token_id: string };
    // The proxy replaces {{ token_id }} with the card and forwards to the processor: the card never comes here.
    const charge = await fetch(`${config.vaultUrl}/proxy/charges`, {
      method: "POST",
      headers: {
        "svc-proxy-key": config.proxyKey,
        "svc-api-key": config.privateKey,
        "content-type": "application/json",
      },
      body: JSON.stringify({ amount: 2500, currency: "EUR", card: `{{ ${token_id} }}` }),
    });
    res.writeHead(charge.status, { "content-type": "application/json" }).end(await charge.text());
  });
}
