import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { logger } from "#shared/logger.ts";
import { client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
let counter = 0;

/** A tenant's OWNER invites someone; the e-mail as the local outbox holds it (CRLF line endings). */
async function invited() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const email = `link${counter++}@example.com`;
  const res = await api.post("/tenants/self/invitations", { key: tenant.managementKey, body: { email } });
  expect(res.status).toBe(201);
  const { eml } = invitationFromOutbox(svc, email);
  const link = /^Accept the invitation: (\S+)\r$/m.exec(eml)?.[1];
  if (!link) throw new Error("no link in the e-mail");
  return { api, eml, link: new URL(link) };
}

describe("the invitation link and its code", () => {
  it("carries the code in the fragment, which a browser never sends: no server or access log sees it", async () => {
    const { link } = await invited();

    expect(link.search).toBe("");
    expect(link.hash).toMatch(/^#code=[A-Za-z0-9_-]{43}$/);
  });

  it("opens an accept page (not 405) whose form POSTs to /invitations/accept, under a strict CSP", async () => {
    const { link } = await invited();

    // What a browser requests when the link is clicked: the path, without the fragment.
    const page = await fetch(`${svc.url}${link.pathname}`);
    const html = await page.text();
    const csp = page.headers.get("content-security-policy") ?? "";
    const inlineScript = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "";
    const scriptHash = createHash("sha256").update(inlineScript, "utf8").digest("base64");

    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(html).toContain('<form id="accept" method="post" action="accept">');
    expect(html).toContain('name="code"');
    // Nothing loaded from anywhere: no src or href, no other origin in the policy.
    expect(html).not.toMatch(/\s(src|href)=/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`script-src 'sha256-${scriptHash}'`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).not.toMatch(/https?:|\*|'unsafe-/);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("cache-control")).toBe("no-store");
    // The page reads the code from the fragment (or an older link's query) and drops it from the address bar.
    expect(inlineScript).toContain("location.hash");
    expect(inlineScript).toContain("history.replaceState");
  });

  it("still opens the page for a link with the code in its query (sent before the fragment), logging no code", async () => {
    // Everything the process logs: the logger's calls, and stdout at INFO (the access line is written there).
    const logged = [vi.spyOn(logger, "info"), vi.spyOn(logger, "warn"), vi.spyOn(logger, "error")];
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    logger.setLogLevel("INFO");
    const code = "olderLinkCode0123456789abcdefghijklmnopqrstu";

    let html: string;
    let page: Response;
    let lines: string;
    try {
      page = await fetch(`${svc.url}/invitations/accept?code=${code}`);
      html = await page.text();
    } finally {
      logger.setLogLevel("SILENT");
      lines = JSON.stringify(logged.flatMap((spy) => spy.mock.calls)) + written.join("");
      stdout.mockRestore();
      for (const spy of logged) spy.mockRestore();
    }

    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(lines).toContain("GET /invitations/accept");
    expect(lines).not.toContain(code);
    // The page is the same static text: the query is read by its script, in the browser, never echoed.
    expect(html).not.toContain(code);
  });

  it("accepts a code copied from the .eml with its line's \\r (and surrounding spaces)", async () => {
    const { api, eml } = await invited();
    // The code on its own line, as copied from a CRLF file: the \r comes along.
    const lines = eml.split("\n");
    const copied = lines.at(-2);
    expect(copied).toMatch(/^[A-Za-z0-9_-]{43}\r$/);

    const accepted = await api.post("/invitations/accept", { body: { code: ` ${copied}` } });

    expect(accepted.status).toBe(201);
    expect(accepted.body.management_key).toMatch(/^key_mgt_/);
  });
});
