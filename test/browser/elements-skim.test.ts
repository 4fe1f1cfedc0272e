/**
 * Attack (review round 5): a script on the merchant's page (a skimmer) mounts a controller frame of the vault made
 * for its own tenant's public key (whose application lists the merchant's origin: nothing can check who owns an
 * origin) and asks it to tokenize `{__svcElement: <the merchant's card element id>}` (ids reach any listener on
 * the page through `elements-ready`). Before: that controller read the merchant's card frame directly (same
 * origin) and posted the card, cvc included, to the skimmer's tenant. A frame now reads only frames made for its
 * own key.
 */

import { createHash } from "node:crypto";
import type { Frame, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { merchantPage, useBrowser, useSite } from "#test/support/browser.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, revealEverything, VISA } from "#test/support/tokens.ts";

const svc = useService();
const chrome = useBrowser();
const shop = useSite();

async function frameWith(page: Page, selector: string): Promise<Frame> {
  for (const f of page.frames()) if ((await f.$(selector).catch(() => null)) !== null) return f;
  throw new Error(`no frame holds ${selector}`);
}

describe("attack: a skimmer's own Elements frame on the merchant's page", () => {
  it("cannot read the merchant's card element into the skimmer's tenant", async () => {
    const api = client(svc.url);
    const merchant = await createTenant(api, svc.rootKey, "Merchant");
    const pub = await api.post<{ key: string }>("/applications", {
      key: merchant.managementKey,
      body: {
        name: "checkout",
        type: "public",
        permissions: ["token:create"],
        allowed_origins: [shop.origin],
      },
    });
    const attacker = await createTenant(api, svc.rootKey, "Attacker");
    const attackerPub = await api.post<{ key: string }>("/applications", {
      key: attacker.managementKey,
      // The merchant's origin, listed by the attacker: accepted.
      body: { name: "skim", type: "public", permissions: ["token:create"], allowed_origins: [shop.origin] },
    });
    expect(attackerPub.status).toBe(201);
    const attackerBackend = await api.post<{ key: string }>("/applications", {
      key: attacker.managementKey,
      body: { name: "reader", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
    });

    shop.pages.set(
      "/checkout",
      merchantPage(
        svc.url,
        // The skimmer: listens for elements-ready (as any third-party script on the page can) to learn ids.
        `<div id="card"></div><script>window.ids = []; addEventListener("message", (e) => { if (e.data && e.data.svc === "elements-ready") ids.push(e.data.id); });</script>`,
      ),
    );
    const page = await chrome.browser.newPage();
    await page.goto(`${shop.origin}/checkout`);
    await page.evaluate(`(async () => {
      window.svc = await SvcElements.init({ apiKey: ${JSON.stringify(pub.body.key)}, baseUrl: ${JSON.stringify(svc.url)} });
      window.card = svc.createElement("card");
      await card.mount("#card");
    })()`);
    const frame = await frameWith(page, "#svc-number");
    await frame.locator("#svc-number").pressSequentially(VISA);
    await frame.locator("#svc-expiry").pressSequentially("1234");
    await frame.locator("#svc-cvc").pressSequentially("123");

    const hash = createHash("sha256").update(attackerPub.body.key).digest("hex");
    const result = await page.evaluate(`new Promise((resolve) => {
      const ids = window.ids.slice();
      const f = document.createElement("iframe");
      f.style.display = "none";
      f.src = ${JSON.stringify(`${svc.url}/elements/v1/frame.html?k=${hash}`)};
      f.onload = () => {
        const channel = new MessageChannel();
        const out = [];
        let call = 1;
        channel.port1.onmessage = (e) => {
          if (typeof e.data?.call !== "number") return;
          out.push(e.data.ok ? e.data.result : e.data.error);
          if (e.data.call === 1) {
            // Try every id the page saw: the card element's is one of them.
            for (const id of ids) channel.port1.postMessage({ call: ++call, request: { kind: "create", body: { type: "card", data: { __svcElement: id } } } });
          }
          if (out.length === ids.length + 1) resolve(out);
        };
        addEventListener("message", (e) => {
          if (e.source === f.contentWindow && e.data?.svc === "elements-ready")
            channel.port1.postMessage({ call: 1, request: { kind: "init", apiKey: ${JSON.stringify(attackerPub.body.key)} } });
        });
        f.contentWindow.postMessage({ svc: "elements-hello", id: "skim", role: "controller", options: {} }, ${JSON.stringify(svc.url)}, [channel.port2]);
      };
      document.body.append(f);
      setTimeout(() => resolve("timeout"), 8000);
    })`);
    expect(result).not.toBe("timeout");
    // The attacker reads its own tenant with its own private key.
    const stolen = await api.get<{ data: { data: unknown }[] }>("/tokens", { key: attackerBackend.body.key });
    expect(JSON.stringify(stolen.body)).not.toContain(VISA);
    await page.close();
  });

  it("cannot copy a value the merchant revealed into its text element", async () => {
    const api = client(svc.url);
    const merchant = await createTenant(api, svc.rootKey, "Merchant2");
    const pub = await api.post<{ key: string }>("/applications", {
      key: merchant.managementKey,
      body: {
        name: "checkout",
        type: "public",
        permissions: ["token:create"],
        allowed_origins: [shop.origin],
      },
    });
    const backend = await api.post<{ key: string }>("/applications", {
      key: merchant.managementKey,
      body: { name: "backend", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
    });
    const token = await api.post<{ id: string }>("/tokens", {
      key: backend.body.key,
      body: {
        type: "card",
        data: { number: "5555555555554444", expiration_month: 1, expiration_year: 2040 },
      },
    });
    const session = await api.post<{ session_key: string; nonce: string }>("/sessions", {
      key: pub.body.key,
    });
    await api.post("/sessions/authorize", {
      key: backend.body.key,
      body: {
        nonce: session.body.nonce,
        rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
      },
    });
    const attacker = await createTenant(api, svc.rootKey, "Attacker2");
    const attackerPub = await api.post<{ key: string }>("/applications", {
      key: attacker.managementKey,
      body: { name: "skim", type: "public", permissions: ["token:create"], allowed_origins: [shop.origin] },
    });
    const attackerBackend = await api.post<{ key: string }>("/applications", {
      key: attacker.managementKey,
      body: { name: "reader", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
    });
    shop.pages.set(
      "/reveal",
      merchantPage(
        svc.url,
        `<div id="shown"></div><script>window.ids = []; addEventListener("message", (e) => { if (e.data && e.data.svc === "elements-ready") ids.push(e.data.id); });</script>`,
      ),
    );
    const page = await chrome.browser.newPage();
    await page.goto(`${shop.origin}/reveal`);
    await page.evaluate(`(async () => {
      window.svc = await SvcElements.init({ apiKey: ${JSON.stringify(pub.body.key)}, baseUrl: ${JSON.stringify(svc.url)} });
      window.shown = svc.createElement("text", { label: "Card number" });
      await shown.mount("#shown");
      const seen = await svc.tokens.retrieve(${JSON.stringify(token.body.id)}, { apiKey: ${JSON.stringify(session.body.session_key)} });
      await shown.setValue(seen.data.number);
    })()`);
    const hash = createHash("sha256").update(attackerPub.body.key).digest("hex");
    await page.evaluate(`new Promise((resolve) => {
      const ids = window.ids.slice();
      const f = document.createElement("iframe");
      f.style.display = "none";
      f.src = ${JSON.stringify(`${svc.url}/elements/v1/frame.html?k=${hash}`)};
      f.onload = () => {
        const channel = new MessageChannel();
        let n = 0;
        channel.port1.onmessage = (e) => {
          if (typeof e.data?.call !== "number") return;
          if (e.data.call === 1) ids.forEach((id, i) => channel.port1.postMessage({ call: i + 2, request: { kind: "create", body: { type: "token", data: { __svcElement: id } } } }));
          else if (++n === ids.length) resolve();
        };
        addEventListener("message", (e) => {
          if (e.source === f.contentWindow && e.data?.svc === "elements-ready")
            channel.port1.postMessage({ call: 1, request: { kind: "init", apiKey: ${JSON.stringify(attackerPub.body.key)} } });
        });
        f.contentWindow.postMessage({ svc: "elements-hello", id: "skim", role: "controller", options: {} }, ${JSON.stringify(svc.url)}, [channel.port2]);
      };
      document.body.append(f);
      setTimeout(resolve, 8000);
    })`);
    const stolen = await api.get<{ data: { data: unknown }[] }>("/tokens", { key: attackerBackend.body.key });
    expect(JSON.stringify(stolen.body)).not.toContain("5555555555554444");
    await page.close();
  });
});
