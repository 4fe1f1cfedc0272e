/**
 * Attack: a proxy invocation's path reaches the tenant's audit log. Anyone holding an open proxy's key (a link
 * anyone can be sent) chooses the path; a caller (or a destination API) that carries data in the path, a card
 * number, an e-mail, a token id an id expression made the data itself, left it in every entry a `log:read` key
 * reads, though the log holds "never data" and `log:read` does not imply access to token data. The access log
 * already keeps the route, never the path, for this reason (lib/constructs/http-api.ts).
 */
import { describe, expect, it } from "vitest";
import { useLocalServer } from "#test/support/local-server.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";
import { VISA } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });
const destination = useLocalServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});

interface LogPage {
  data: { entity_type: string; operation: string; message: string; entity_id: string }[];
}

describe("attack: data in a proxy invocation's path", () => {
  it("never writes the path (nor what it holds) into the audit log", async () => {
    const { api, managementKey, key } = await createOpenProxy(svc.url, svc.rootKey, `${destination.url}/`);
    for (const path of [`/proxy/cards/${VISA}/verify`, "/proxy/users/alice%40example.com"]) {
      const sent = await api.get(path, { headers: { "svc-proxy-key": key } });
      expect(sent.status).toBe(200);
    }
    const logs = await api.get<LogPage>("/logs?entity_type=proxy&size=100", { key: managementKey });
    expect(logs.status).toBe(200);
    const invocations = logs.body.data.filter((entry) => entry.operation === "invoke");
    expect(invocations).toHaveLength(2);
    const text = JSON.stringify(logs.body);
    expect(text).not.toContain(VISA);
    expect(text).not.toContain("alice");
  });
});
