/**
 * Attack (front-end review, 27 Nov 2026): the controller frame calls the API from the vault's own origin, which
 * the CORS origin check took for same-origin and skipped. `init` binds the frame to the key `k` names, but
 * `retrieve` took any session key: a page on an origin the session's creator does not list used the session through
 * a frame made for its own key, then read the revealed value out of its own text elements' `valid` state (a
 * `pattern` tested on the revealed value, reported in every change event, a bit per element).
 */
import { describe, expect, it } from "vitest";
import { merchantPage, useBrowser, useSite } from "#test/support/browser.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, revealEverything, VISA } from "#test/support/tokens.ts";

const svc = useService();
const chrome = useBrowser();
const shop = useSite();
const evil = useSite();

async function victimWithSession() {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey, "Victim");
  const pub = await api.post<{ key: string }>("/applications", {
    key: managementKey,
    body: { name: "checkout", type: "public", permissions: ["token:create"], allowed_origins: [shop.origin] },
  });
  const backend = await api.post<{ key: string }>("/applications", {
    key: managementKey,
    body: { name: "backend", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
  });
  const token = await api.post<{ id: string }>("/tokens", {
    key: backend.body.key,
    body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2040 } },
  });
  const session = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: pub.body.key });
  const authorized = await api.post("/sessions/authorize", {
    key: backend.body.key,
    body: {
      nonce: session.body.nonce,
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    },
  });
  expect(authorized.status).toBe(200);
  return { tokenId: token.body.id, sessionKey: session.body.session_key };
}

describe("front-end review: the controller frame and a session key from another origin", () => {
  it("refuses a session key whose creator does not list the page's origin, through the frame as directly", async () => {
    const victim = await victimWithSession();
    // The attacker: its own tenant, its own public key listing its own site.
    const api = client(svc.url);
    const attacker = await createTenant(api, svc.rootKey, "Attacker");
    const own = await api.post<{ key: string }>("/applications", {
      key: attacker.managementKey,
      body: { name: "mine", type: "public", permissions: ["token:create"], allowed_origins: [evil.origin] },
    });
    expect(own.status).toBe(201);
    evil.pages.set("/", merchantPage(svc.url, '<div id="slots"></div>'));
    const page = await chrome.browser.newPage();
    await page.goto(`${evil.origin}/`);

    // Directly: CORS refuses the session key on this origin (403, no ACAO: fetch rejects).
    const direct = await page.evaluate(`fetch(${JSON.stringify(`${svc.url}/tokens/${victim.tokenId}`)}, {
      headers: { "svc-api-key": ${JSON.stringify(victim.sessionKey)} },
    }).then((r) => "status " + r.status, (e) => "blocked")`);
    expect(direct).toBe("blocked");

    // Through a frame made for the attacker's own key (its CSP lets this origin embed it).
    const outcome = (await page.evaluate(`(async () => {
      const svc = await SvcElements.init({ apiKey: ${JSON.stringify(own.body.key)}, baseUrl: ${JSON.stringify(svc.url)} });
      let seen;
      try {
        seen = await svc.tokens.retrieve(${JSON.stringify(victim.tokenId)}, { apiKey: ${JSON.stringify(victim.sessionKey)} });
      } catch (e) {
        return { refused: e.message };
      }
      // Read the revealed number out of text elements: one bit per element, via the pattern's verdict.
      const ref = seen.data.number;
      const slots = document.getElementById("slots");
      const bit = async (pattern) => {
        const el = svc.createElement("text", { pattern });
        let valid;
        el.on("change", (e) => { valid = e.valid; });
        const div = document.createElement("div");
        slots.append(div);
        await el.mount(div);
        await el.setValue(ref);
        await new Promise((r) => setTimeout(r, 20));
        el.unmount();
        return valid;
      };
      const sets = [[1,3,5,7,9], [2,3,6,7], [4,5,6,7], [8,9]];
      let number = "";
      for (let i = 0; i < 32; i++) {
        if (!(await bit(".{" + (i + 1) + "}.*"))) break;
        let d = 0;
        for (let b = 0; b < 4; b++) if (await bit(".{" + i + "}[" + sets[b].join("") + "].*")) d |= 1 << b;
        number += String(d);
      }
      return { ref, number };
    })()`)) as { refused?: string; ref?: string; number?: string };

    // Secure behaviour: the frame refuses, as the API does for a browser on this origin.
    expect(outcome.number).not.toBe(VISA);
    expect(outcome.refused).toBeDefined();
    await page.close();
  }, 120_000);
});
