/**
 * Review s52-a: an application created through a member (POST /applications, with its key by default) while the
 * member's deletion ran was written, its key minted by the member, and the deletion, which had listed the member's
 * keys before, left that key listed, logged created and never revoked. A deletion now marks the member first, and
 * every mint through the member is conditional on that mark's absence.
 */
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { joinMember } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

describe("attack: an application (with its key) created while its member is being deleted", () => {
  it("is refused, so no key of the member outlives its deletion", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Late app key via create");
    const member = await joinMember(svc, api, tenant.managementKey);

    const dynamo = svc.service.deps.dynamo;
    const send = dynamo.send.bind(dynamo);
    type Created = { status: number; body: { id?: string; key?: string; keys?: { id: string }[] } };
    let late: Created | undefined;
    const holder = `"MEMBER#${member.id}"`;
    const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
      if (
        !late &&
        command instanceof TransactWriteCommand &&
        JSON.stringify(command.input).includes(holder)
      ) {
        late = { status: 0, body: {} };
        late = await api.post("/applications", {
          key: member.management_key,
          body: { name: "late", type: "management", permissions: ["application:read"] },
        });
      }
      return send(command as TransactWriteCommand);
    }) as typeof dynamo.send);
    let deleted: number;
    try {
      deleted = (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey }))
        .status;
    } finally {
      spy.mockRestore();
    }
    expect({ deleted, late: late?.status }).toEqual({ deleted: 204, late: 403 });
    const names = await api.get<{ data: { name: string }[] }>("/applications?size=100", {
      key: tenant.managementKey,
    });
    expect(names.body.data.map((app) => app.name)).not.toContain("late");
  });
});
