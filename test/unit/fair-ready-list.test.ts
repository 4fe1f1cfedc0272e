import { describe, expect, it } from "vitest";
import { FairReadyList } from "#shared/adapters/local/fair-ready-list.ts";

const takeAll = (list: FairReadyList<string>) => {
  const taken: string[] = [];
  for (let next = list.take(); next; next = list.take()) taken.push(next.entry);
  return taken;
};

describe("FairReadyList (the local job queue's tenants, served as SQS fair queues serve groups)", () => {
  it("serves a quiet tenant's job before a noisy tenant's backlog", () => {
    const list = new FairReadyList<string>(3);
    for (let i = 1; i <= 8; i++) list.push("noisy", `noisy-${i}`);
    list.push("quiet", "quiet-1");

    // Three workers take three of the noisy tenant's jobs (its share), the fourth the quiet tenant's.
    expect([list.take(), list.take(), list.take(), list.take()].map((t) => t?.entry)).toEqual([
      "noisy-1",
      "quiet-1",
      "noisy-2",
      "noisy-3",
    ]);
  });

  it("never runs more than perTenant jobs of one tenant, so a worker stays free for another", () => {
    const list = new FairReadyList<string>(3);
    for (let i = 1; i <= 8; i++) list.push("noisy", `noisy-${i}`);

    expect(takeAll(list)).toEqual(["noisy-1", "noisy-2", "noisy-3"]);
    list.push("quiet", "quiet-1");
    expect(list.take()?.entry).toBe("quiet-1");
    list.done("noisy");
    expect(list.take()?.entry).toBe("noisy-4");
    expect(list.length).toBe(4);
  });

  it("keeps each tenant's own jobs in order, and the oldest first between tenants running as many", () => {
    const list = new FairReadyList<string>(10);
    list.push("a", "a-1");
    list.push("b", "b-1");
    list.push("a", "a-2");
    list.push("b", "b-2");

    expect(takeAll(list)).toEqual(["a-1", "b-1", "a-2", "b-2"]);
  });
});
