/**
 * examples/checkout end to end in a real browser: card entry in the vault's frame → token → the merchant's back
 * end charges it through the pre-configured proxy → the fake processor receives the card. The merchant's page
 * and back end never see the number.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useBrowser } from "#test/support/browser.ts";
import { useService } from "#test/support/service.ts";
import { VISA } from "#test/support/tokens.ts";
import { type Checkout, startCheckout } from "../../examples/checkout/main.ts";

// The proxy forwards to the fake processor on 127.0.0.1.
const svc = useService({ allowPrivateDestinations: true });
const chrome = useBrowser();
let checkout: Checkout;

beforeAll(async () => {
  checkout = await startCheckout({ vaultUrl: svc.url, rootKey: svc.rootKey });
});
afterAll(async () => {
  await checkout?.close();
});

describe("example checkout", () => {
  it("charges the card typed in the vault's frame, the merchant never holding the number", async () => {
    const page = await chrome.browser.newPage();
    await page.setViewportSize({ width: 720, height: 420 });
    await page.goto(checkout.url);
    const frame = page.frameLocator("iframe[title='Secure card input']");
    await frame.locator("#svc-number").pressSequentially(VISA);
    await frame.locator("#svc-expiry").pressSequentially("1234");
    await frame.locator("#svc-cvc").pressSequentially("123");
    await page.locator("#pay:not([disabled])").click();
    await page.locator("#result", { hasText: "Paid" }).waitFor();
    expect(await page.locator("#result").textContent()).toMatch(
      /^Paid with XXXXXXXXXXXX4242 \(charge ch_1\)\.$/,
    );

    expect(checkout.charges).toHaveLength(1);
    expect(checkout.charges[0]?.card).toEqual({
      number: VISA,
      expiration_month: 12,
      expiration_year: 2034,
      cvc: "123",
    });
    expect(checkout.received).toHaveLength(1);
    expect(Object.keys(JSON.parse(checkout.received[0] as string))).toEqual(["token_id"]);
    expect((await page.content()).replace(/\s/g, "")).not.toContain(VISA);
    await page.screenshot({ path: "/tmp/svc-checkout.png" });
    await page.close();
  });
});
