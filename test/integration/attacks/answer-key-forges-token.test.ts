import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, VISA } from "#test/support/tokens.ts";

/**
 * Review (key custody, c32f104): the five answer-key functions (tenants, applications, members, sessions,
 * transactions) may use only `answers-*` keys, "so a flaw in one cannot unwrap a data or HMAC key". But the data
 * Sealer opens whatever key id a ciphertext names, answer keys included: a flaw in an answer-key function (which
 * writes the table) can seal chosen token data under `answers-k<N>` with the token's binding, and every token
 * function then opens it as the token's data (a card number swapped for the attacker's, a cvc, a proxy's secret).
 */
const svc = useService();

describe("attack: an answer-key function forges token data", () => {
  it("a token's data sealed under an answer key is never opened as token data", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const key = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const created = await api.post<{ id: string }>("/tokens", {
      key,
      body: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2040 } },
    });
    expect(created.status).toBe(201);
    const tokenId = created.body.id;

    // What the answer-key function can do with its own grant: seal under the tenant's answer key…
    const forged = { number: "5105105105105100", expiration_month: 1, expiration_year: 2041 };
    const sealed = await svc.service.deps.answerSealer.seal(
      { tenantId: tenant.tenantId, tokenId, field: "data" },
      JSON.stringify(forged),
    );
    expect(sealed.split(".")[1]).toMatch(/^answers-k\d+$/);
    // …and write the table (transactions commits move token items).
    const { dynamo, config } = svc.service.deps;
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: tokenKeys.token(tenant.tenantId, tokenId),
        ConditionExpression: "attribute_exists(sealed_data)",
        UpdateExpression: "SET sealed_data = :s",
        ExpressionAttributeValues: { ":s": sealed },
      }),
    );

    const read = await api.get<{ data?: unknown }>(`/tokens/${tokenId}`, { key });
    // Before the fix: 200 with the forged card, opened by the token function as the token's own data.
    expect(read.body.data).not.toEqual(forged);
    expect(read.status).not.toBe(200);
  });
});
