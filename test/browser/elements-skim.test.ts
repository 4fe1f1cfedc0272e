/**
 * Attack (review round 5): a script on the merchant's page (a skimmer) mounts a controller frame of the vault made
 * for its own tenant's public key (whose application lists the merchant's origin: nothing can check who owns an
 * origin) and asks it to tokenize `{__svcElement: <the merchant's element id>}` (ids reach any listener on the
 * page through `elements-ready`). Before: that controller read the merchant's frames directly (same origin) and
 * posted the typed card, cvc included, or a revealed value, to the skimmer's tenant. A frame now reads only
 * frames made for its own key.
 */
import { createHash } from "node:crypto";
import type { Frame, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { merchantPage, useBrowser, useSite } from "#test/support/browser.ts";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, revealEverything, VISA } from "#test/support/tokens.ts";

const svc = useService();
const chrome = useBrowser();
const shop = useSite();

/** The page's own markup: an element's slot, and the skimmer listening for element ids. */
const SKIMMED_PAGE = (slot: string) =>
  merchantPage(
    svc.url,
    `<div id="${slot}"></div><script>window.ids = []; addEventListener("message", (e) => { if (e.data && e.data.svc === "elements-ready") ids.push(e.data.id); });</script>`,
  );

/** A tenant with a public application listing the shop's origin, and a revealing private key. */
async function tenantOnShop(api: Client, name: string) {
  const tenant = await createTenant(api, svc.rootKey, name);
  const app = (body: Record<string, unknown>) =>
    api.post<{ key: string }>("/applications", { key: tenant.managementKey, body });
  const origins = [shop.origin];
  const pub = await app({
    name: "web",
    type: "public",
    permissions: ["token:create"],
    allowed_origins: origins,
  });
  expect(pub.status).toBe(201); // for the skimmer: the merchant's origin, listed by another tenant
  const reader = await app({
    name: "reader",
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    rules: revealEverything,
  });
  return { api, publicKey: pub.body.key, readerKey: reader.body.key };
}

async function frameWith(page: Page, selector: string): Promise<Frame> {
  for (const f of page.frames()) if ((await f.$(selector).catch(() => null)) !== null) return f;
  throw new Error(`no frame holds ${selector}`);
}

/**
 * The skimmer: mounts the vault's frame made for its own key, initializes it with that key, and asks it to create
 * a token of `type` from each element id the page announced.
 */
function skim(page: Page, skimmerKey: string, type: string): Promise<unknown> {
  const hash = createHash("sha256").update(skimmerKey).digest("hex");
  return page.evaluate(`new Promise((resolve) => {
    const ids = window.ids.slice();
    const f = document.createElement("iframe");
    f.style.display = "none";
    f.src = ${JSON.stringify(`${svc.url}/elements/v1/frame.html?k=${hash}`)};
    f.onload = () => {
      const channel = new MessageChannel();
      const out = [];
      channel.port1.onmessage = (e) => {
        if (typeof e.data?.call !== "number") return;
        out.push(e.data.ok ? e.data.result : e.data.error);
        if (e.data.call === 1)
          ids.forEach((id, i) => channel.port1.postMessage({ call: i + 2, request: { kind: "create", body: { type: ${JSON.stringify(type)}, data: { __svcElement: id } } } }));
        if (out.length === ids.length + 1) resolve(out);
      };
      addEventListener("message", (e) => {
        if (e.source === f.contentWindow && e.data?.svc === "elements-ready")
          channel.port1.postMessage({ call: 1, request: { kind: "init", apiKey: ${JSON.stringify(skimmerKey)} } });
      });
      f.contentWindow.postMessage({ svc: "elements-hello", id: "skim", role: "controller", options: {} }, ${JSON.stringify(svc.url)}, [channel.port2]);
    };
    document.body.append(f);
    setTimeout(() => resolve("timeout"), 60_000); // a bound for a loaded machine, not a speed
  })`);
}

describe("attack: a skimmer's own Elements frame on the merchant's page", () => {
  it("cannot read the merchant's card element into the skimmer's tenant", async () => {
    const api = client(svc.url);
    const merchant = await tenantOnShop(api, "Merchant");
    const skimmer = await tenantOnShop(api, "Skimmer");
    shop.pages.set("/checkout", SKIMMED_PAGE("card"));
    const page = await chrome.browser.newPage();
    await page.goto(`${shop.origin}/checkout`);
    await page.evaluate(`(async () => {
      window.svc = await SvcElements.init({ apiKey: ${JSON.stringify(merchant.publicKey)}, baseUrl: ${JSON.stringify(svc.url)} });
      window.card = svc.createElement("card");
      await card.mount("#card");
    })()`);
    const frame = await frameWith(page, "#svc-number");
    await frame.locator("#svc-number").pressSequentially(VISA);
    await frame.locator("#svc-expiry").pressSequentially("1234");
    await frame.locator("#svc-cvc").pressSequentially("123");

    expect(await skim(page, skimmer.publicKey, "card")).not.toBe("timeout");
    const stolen = await api.get("/tokens", { key: skimmer.readerKey });
    expect(JSON.stringify(stolen.body)).not.toContain(VISA);
    await page.close();
  });

  it("cannot copy a value the merchant revealed into its text element", async () => {
    const api = client(svc.url);
    const merchant = await tenantOnShop(api, "Merchant2");
    const skimmer = await tenantOnShop(api, "Skimmer2");
    const revealed = "5555555555554444";
    const token = await api.post<{ id: string }>("/tokens", {
      key: merchant.readerKey,
      body: { type: "card", data: { number: revealed, expiration_month: 1, expiration_year: 2040 } },
    });
    const session = await api.post<{ session_key: string; nonce: string }>("/sessions", {
      key: merchant.publicKey,
    });
    const rules = [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }];
    await api.post("/sessions/authorize", {
      key: merchant.readerKey,
      body: { nonce: session.body.nonce, rules },
    });
    shop.pages.set("/reveal", SKIMMED_PAGE("shown"));
    const page = await chrome.browser.newPage();
    await page.goto(`${shop.origin}/reveal`);
    await page.evaluate(`(async () => {
      window.svc = await SvcElements.init({ apiKey: ${JSON.stringify(merchant.publicKey)}, baseUrl: ${JSON.stringify(svc.url)} });
      window.shown = svc.createElement("text", { label: "Card number" });
      await shown.mount("#shown");
      const seen = await svc.tokens.retrieve(${JSON.stringify(token.body.id)}, { apiKey: ${JSON.stringify(session.body.session_key)} });
      await shown.setValue(seen.data.number);
    })()`);

    await skim(page, skimmer.publicKey, "token");
    const stolen = await api.get("/tokens", { key: skimmer.readerKey });
    expect(JSON.stringify(stolen.body)).not.toContain(revealed);
    await page.close();
  });

  it("cannot get a short typed value (a cvc, a PIN) back whole by creating it as a type masked to its last 4", async () => {
    // Front-end review (28 Nov 2026): the page chooses a create's type; a mask of `reveal_last: 4` must not show a
    // value of 4 characters or fewer whole.
    const { publicKey } = await tenantOnShop(client(svc.url), "Merchant");
    shop.pages.set(
      "/split",
      merchantPage(svc.url, '<div id="n"></div><div id="e"></div><div id="c"></div><div id="t"></div>'),
    );
    const page = await chrome.browser.newPage();
    await page.goto(`${shop.origin}/split`);
    await page.evaluate(`(async () => {
      window.svc = await SvcElements.init({ apiKey: ${JSON.stringify(publicKey)}, baseUrl: ${JSON.stringify(svc.url)} });
      window.n = svc.createElement("cardNumber");
      window.e = svc.createElement("cardExpirationDate");
      window.c = svc.createElement("cardVerificationCode");
      window.t = svc.createElement("text", { label: "PIN" });
      await Promise.all([n.mount("#n"), e.mount("#e"), c.mount("#c"), t.mount("#t")]);
    })()`);
    await (await frameWith(page, "#svc-number")).locator("#svc-number").pressSequentially("4000056655665556");
    await (await frameWith(page, "#svc-expiry")).locator("#svc-expiry").pressSequentially("0731");
    await (await frameWith(page, "#svc-cvc")).locator("#svc-cvc").pressSequentially("737");
    await (await frameWith(page, "#svc-text")).locator("#svc-text").fill("4821");

    // The skimmer: the cvc element created as an account number (mask: reveal_last 4).
    const viaAccount = (await page.evaluate(
      `svc.tokens.create({ type: "us_bank_account_number", data: c }).then((t) => t, (e) => e.message)`,
    )) as { data?: unknown };
    // ...or as a bank token's account number beside a literal routing number.
    const viaBank = (await page.evaluate(
      `svc.tokens.create({ type: "bank", data: { routing_number: "021000021", account_number: c } }).then((t) => t, (e) => e.message)`,
    )) as { data?: { account_number?: unknown } };
    // A short value typed into a text element (a PIN) the same way.
    const pin = (await page.evaluate(
      `svc.tokens.create({ type: "us_bank_account_number", data: t }).then((t) => t, (e) => e.message)`,
    )) as { data?: unknown };
    // The page never holds a typed value.
    expect(viaAccount.data).not.toBe("737");
    expect(viaBank.data?.account_number).not.toBe("737");
    expect(pin.data).not.toBe("4821");
    await page.close();
  });
});
