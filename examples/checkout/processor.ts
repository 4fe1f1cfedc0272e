/** A fake card processor: accepts any Luhn-shaped card and remembers what it was sent (the test reads it). */
import { createServer, type Server } from "node:http";

export interface Charge {
  amount: number;
  currency: string;
  card: { number: string; expiration_month: number; expiration_year: number; cvc?: string };
}

export function fakeProcessor(charges: Charge[] = []): Server {
  return createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const charge = JSON.parse(body) as Charge;
    charges.push(charge);
    const ok = /^\d{12,19}$/.test(charge.card?.number ?? "");
    res
      .writeHead(ok ? 201 : 402, { "content-type": "application/json" })
      .end(JSON.stringify({ id: `ch_${charges.length}`, status: ok ? "succeeded" : "declined" }));
  });
}
