import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { CapacityMeter, itemSize } from "#shared/adapters/dynamodb/consumed-capacity.ts";

type Middleware = (
  next: (args: { input: unknown }) => Promise<{ output: unknown }>,
  context: { commandName: string },
) => (args: { input: unknown }) => Promise<{ output: unknown }>;

/** A meter on a client whose every call answers `output` (or throws `error`), as DynamoDB Local would. */
function metered(answer: { output?: unknown; error?: Error }) {
  let middleware: Middleware | undefined;
  const client = { middlewareStack: { add: (m: Middleware) => (middleware = m) } };
  const meter = new CapacityMeter();
  meter.install(client as unknown as DynamoDBDocumentClient);
  const send = async (commandName: string, input: unknown) => {
    const run = (middleware as Middleware)(
      async (args) => {
        expect((args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity).toBe("INDEXES");
        if (answer.error) throw answer.error;
        return { output: answer.output ?? {} };
      },
      { commandName },
    );
    await run({ input }).catch(() => undefined);
  };
  return { meter, send };
}

describe("the cost run's capacity meter", () => {
  it("sizes items as DynamoDB does: names plus values, lists and maps with their overhead", () => {
    expect(itemSize({ PK: "ab", n: 12345 })).toBe(2 + 2 + 1 + 4);
    expect(itemSize({ m: { a: "x" }, l: ["y"], b: true, z: null })).toBe(
      1 + 3 + 1 + 1 + 1 + (1 + 3 + 1 + 1) + 2 + 2,
    );
  });

  it("bills a write transaction item by item at 2×, index copies included, not as DynamoDB Local reports it", async () => {
    const { meter, send } = metered({
      output: { ConsumedCapacity: [{ CapacityUnits: 4, WriteCapacityUnits: 4 }] },
    });
    await send("TransactWriteItemsCommand", {
      TransactItems: [
        { Put: { Item: { PK: "a", SK: "b", GSI1PK: "g", GSI1SK: "s" } } },
        { Put: { Item: { PK: "a", SK: "c", blob: "x".repeat(1500) } } },
        { Delete: { Key: { PK: "a", SK: "d" } } },
      ],
    });
    const totals = meter.take();
    expect(totals.writeUnits).toBe(2 + 2 + 4 + 2);
    expect(totals.indexWriteUnits).toBe(2);
    expect(totals.itemsPut).toBe(2);
  });

  it("takes single calls' figures as reported, and bills a failed conditional write one unit", async () => {
    const read = metered({ output: { ConsumedCapacity: { CapacityUnits: 0.5 } } });
    await read.send("GetItemCommand", { Key: { PK: "a", SK: "b" } });
    expect(read.meter.take()).toMatchObject({ readUnits: 0.5, writeUnits: 0, calls: 1, serialCalls: 1 });
    const failed = new Error("failed");
    failed.name = "ConditionalCheckFailedException";
    const write = metered({ error: failed });
    await write.send("PutItemCommand", { Item: { PK: "a", SK: "b" } });
    expect(write.meter.take()).toMatchObject({ readUnits: 0, writeUnits: 1, itemsPut: 1 });
  });
});
