import { describe, expect, it } from "vitest";
import { useLocalServer } from "#test/support/local-server.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

const destination = useLocalServer((_req, res) =>
  res.writeHead(200, { "content-type": "application/json" }).end("{}"),
);

describe("a proxy transform's error", () => {
  it("stays generic to callers, and shows its message to a member of the tenant calling with their own key", async () => {
    const {
      api,
      managementKey,
      key: proxyKey,
    } = await createOpenProxy(svc.url, svc.rootKey, destination.url, {
      name: "throws",
      request_transform: {
        code: `module.exports = async (req) => { throw new TypeError("no field 'amount' in " + JSON.stringify(req.args.body)); };`,
      },
    });
    const narrow = await appKey(api, managementKey, { type: "private", permissions: ["token:use"] });
    const call = (key?: string) =>
      api.post<{ proxy_error: Record<string, unknown> }>("/proxy", {
        headers: { "svc-proxy-key": proxyKey },
        ...(key ? { key } : {}),
        body: { card: "4242424242424242" },
      });

    const anonymous = await call();
    const application = await call(narrow);
    const member = await call(managementKey);

    for (const res of [anonymous, application]) {
      expect(res.status).toBe(500);
      expect(res.body.proxy_error).toMatchObject({ title: "Transform Failed" });
      expect(JSON.stringify(res.body)).not.toContain("4242424242424242");
      expect(res.body.proxy_error).not.toHaveProperty("errors");
    }
    expect(member.status).toBe(500);
    expect(member.body.proxy_error).toMatchObject({
      errors: { error: [`no field 'amount' in {"card":"4242424242424242"}`] },
      detail: expect.stringContaining("TypeError: no field 'amount'"),
    });
  });
});
