/**
 * The invitation link clicked in a real browser (Debian's chromium): the accept page takes the code from the
 * link's fragment, drops it from the address bar, POSTs it and shows the management key, its CSP intact.
 */
import { describe, expect, it } from "vitest";
import { useBrowser } from "#test/support/browser.ts";
import { client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
const chrome = useBrowser();

describe("the invitation accept page", () => {
  it("accepts the invitation from the e-mail's link and shows the management key once", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const email = "clicked@example.com";
    await api.post("/tenants/self/invitations", { key: managementKey, body: { email } });
    const { eml } = invitationFromOutbox(svc, email);
    const mailed = new URL(/^Accept the invitation: (\S+)\r$/m.exec(eml)?.[1] ?? "");
    // The service under test listens on its own port, not the one SVC_INVITATION_URL's default names.
    const link = `${svc.url}${mailed.pathname}${mailed.search}${mailed.hash}`;
    const page = await chrome.browser.newPage();
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));

    await page.goto(link);
    const prefilled = await page.inputValue('input[name="code"]');
    const addressAfterLoad = page.url();
    await page.fill('input[name="first_name"]', "Grace");
    await page.click('button[name="send"]');
    await page.waitForSelector("#accepted:not([hidden])");
    const key = (await page.textContent("#key")) ?? "";
    const asMember = await api.get("/tenants/self", { key });
    await page.close();

    expect(prefilled).toBe(mailed.hash.slice("#code=".length));
    expect(addressAfterLoad).toBe(`${svc.url}/invitations/accept`);
    expect(key).toMatch(/^key_mgt_/);
    expect(asMember.status).toBe(200);
    // No CSP refusal nor script error: the inline script and style run under the page's own policy.
    expect(problems).toEqual([]);
  });
});
