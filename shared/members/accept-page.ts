import { createHash } from "node:crypto";

/**
 * The page an invitation link opens (GET /invitations/accept): a form that POSTs the code to
 * /invitations/accept and shows the management key it answers, once. The code comes from the link's fragment
 * (never sent to any server, so in no access log) or, for links sent before the fragment, its query; the page
 * then drops it from the address bar and history. Inline script and style, allowed by hash: the page loads
 * nothing, talks only to its own origin and cannot be framed.
 */
const CSS = [
  "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:34em;margin:3em auto;",
  "padding:0 1em;color:#1f2937;line-height:1.4}",
  "label{display:block;margin:0 0 .8em}input{display:block;width:100%;box-sizing:border-box;padding:.5em;",
  "font:inherit;border:1px solid #c4c9d2;border-radius:6px}",
  "button{font:inherit;padding:.5em 1.2em}pre{white-space:pre-wrap;word-break:break-all;background:#f3f4f6;",
  "padding:.8em;border-radius:6px}#error{color:#b91c1c}",
].join("");

const SCRIPT = `(() => {
  const form = document.getElementById("accept");
  const code = form.elements.code;
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("code") ||
    new URLSearchParams(location.search).get("code") || "";
  code.value = fromLink.trim();
  if (location.hash || location.search) history.replaceState(null, "", location.pathname);
  const error = document.getElementById("error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const body = { code: code.value.trim() };
    for (const name of ["first_name", "last_name"]) {
      const value = form.elements[name].value.trim();
      if (value) body[name] = value;
    }
    form.elements.send.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        credentials: "omit",
      });
      const answer = await response.json().catch(() => ({}));
      if (response.status === 201 && typeof answer.management_key === "string") {
        form.hidden = true;
        document.getElementById("key").textContent = answer.management_key;
        document.getElementById("accepted").hidden = false;
        return;
      }
      error.textContent = typeof answer.detail === "string" ? answer.detail : "The invitation could not be accepted.";
    } catch {
      error.textContent = "The vault could not be reached.";
    }
    form.elements.send.disabled = false;
  });
})();`;

const hash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

export const ACCEPT_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(CSS)}`,
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const ACCEPT_PAGE_HTML =
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<title>Accept the invitation</title><style>${CSS}</style></head><body><main>` +
  `<h1>Accept the invitation</h1>` +
  `<form id="accept" method="post" action="accept">` +
  `<label>Invitation code<input name="code" required maxlength="200" autocomplete="off" spellcheck="false"></label>` +
  `<label>First name (optional)<input name="first_name" maxlength="100" autocomplete="given-name"></label>` +
  `<label>Last name (optional)<input name="last_name" maxlength="100" autocomplete="family-name"></label>` +
  `<button name="send" type="submit">Accept</button>` +
  `<p id="error" role="alert"></p></form>` +
  `<noscript><p>This page needs JavaScript to send the code. Without it: ` +
  `POST {"code": "&lt;the code&gt;"} as JSON to /invitations/accept.</p></noscript>` +
  `<section id="accepted" hidden><p>You are an ADMIN member of the tenant. Your management key, ` +
  `shown only this once: keep it now.</p><pre id="key"></pre></section>` +
  `</main><script>${SCRIPT}</script></body></html>`;
