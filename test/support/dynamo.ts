import { type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { inject, vi } from "vitest";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";

export const TEST_TABLE = "svc-vault";

/** A document client on the run's DynamoDB Local, with the table created. */
export async function testDynamo() {
  const client = createDocumentClient({ region: "us-east-1", endpoint: inject("dynamodbEndpoint") });
  await ensureTable(client, TEST_TABLE);
  return client;
}

/**
 * Runs `during` with the first of `client`'s calls that `matches` failing as DynamoDB failing part-way would (an
 * InternalServerError before it is written), every other call going through.
 */
export async function withOneStoreFailure<T>(
  client: DynamoDBDocumentClient,
  matches: (command: unknown) => boolean,
  during: () => Promise<T>,
): Promise<T> {
  const send = client.send.bind(client);
  let failed = false;
  const spy = vi.spyOn(client, "send").mockImplementation((async (command: unknown) => {
    if (!failed && matches(command)) {
      failed = true;
      throw Object.assign(new Error("the table went away"), { name: "InternalServerError" });
    }
    return send(command as Parameters<typeof send>[0]);
  }) as typeof client.send);
  try {
    return await during();
  } finally {
    spy.mockRestore();
  }
}

/** Whether a call is a query of the tenant's application keys (what a member's deletion lists). */
export const listsApplicationKeys = (command: unknown) =>
  command instanceof QueryCommand && JSON.stringify(command.input).includes('"APPKEY#"');

/**
 * Runs `during` with `act` run at each of `client`'s calls that `matches`: "before" it is sent, or "after" its
 * answer came and before the caller sees it (a race set off at that moment). Every call goes through.
 */
export async function actingAt<T>(
  client: DynamoDBDocumentClient,
  matches: (command: unknown) => boolean,
  when: "before" | "after",
  act: () => Promise<void>,
  during: () => Promise<T>,
): Promise<T> {
  const send = client.send.bind(client);
  const spy = vi.spyOn(client, "send").mockImplementation((async (command: unknown) => {
    const acts = matches(command);
    if (acts && when === "before") await act();
    const out = await send(command as Parameters<typeof send>[0]);
    if (acts && when === "after") await act();
    return out;
  }) as typeof client.send);
  try {
    return await during();
  } finally {
    spy.mockRestore();
  }
}
