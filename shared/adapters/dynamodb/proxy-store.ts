import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { ProxyToStore, StoredProxy } from "#shared/domain/proxies/proxy.ts";
import type { ProxySeals, ProxyStore } from "#shared/ports/proxy-store.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { transactOrFalse } from "./client.ts";
import { configurationAsRead } from "./configuration-condition.ts";
import { queryAll } from "./paging.ts";

const proxyKeys = {
  proxy: (tenantId: string, id: string) => ({ PK: `TENANT#${tenantId}`, SK: `PROXY#${id}` }),
  key: (keyHash: string) => ({ PK: `PROXYKEY#${keyHash}`, SK: "META" }),
};

/**
 * An update setting the proxy's seals (`next`), conditioned on the proxy being as `read` holds it: its sealed key,
 * and, when a configuration is written, its configuration (the sealed one, or the plain map of an older item,
 * which the write removes). A save meanwhile (which keeps the sealed key but writes its own configuration) then
 * wins rather than being overwritten with what was read.
 */
function sealsUpdate(read: StoredProxy, next: ProxySeals, more: { set?: string; values?: object } = {}) {
  const set = ["sealed_key = :sealed", ...(more.set ? [more.set] : [])];
  const conditions = ["sealed_key = :from"];
  const values: Record<string, unknown> = { ":from": read.sealed_key, ":sealed": next.sealed_key };
  let remove = "";
  if (next.sealed_configuration !== undefined) {
    set.push("sealed_configuration = :config");
    values[":config"] = next.sealed_configuration;
    const asRead = configurationAsRead(read);
    conditions.push(asRead.condition);
    Object.assign(values, asRead.values);
    remove = " REMOVE configuration";
  }
  return {
    UpdateExpression: `SET ${set.join(", ")}${remove}`,
    ConditionExpression: conditions.join(" AND "),
    ExpressionAttributeValues: { ...values, ...more.values },
  };
}

/** Proxies in the tenant's partition; PROXYKEY#<hash> finds one by its key at invocation. */
export class DynamoProxyStore implements ProxyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  private item(proxy: ProxyToStore) {
    return { ...proxyKeys.proxy(proxy.tenant_id, proxy.id), entity: "proxy", ...proxy };
  }

  /** The item that finds the proxy by the hash of its key (written with the proxy, or with its new key). */
  private keyLookupPut(proxy: StoredProxy, keyHash: string) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...proxyKeys.key(keyHash),
          entity: "proxy_key",
          tenant_id: proxy.tenant_id,
          proxy_id: proxy.id,
        },
        ConditionExpression: "attribute_not_exists(PK)",
      },
    };
  }

  async create(proxy: ProxyToStore, audit: LogEntry): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: this.item(proxy),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
          this.keyLookupPut(proxy, proxy.key_hash),
          this.audit.put(audit),
        ],
      }),
    );
  }

  async get(tenantId: string, id: string): Promise<StoredProxy | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: proxyKeys.proxy(tenantId, id), ConsistentRead: true }),
    );
    return out.Item ? stripKeys<StoredProxy>(out.Item) : undefined;
  }

  async list(tenantId: string): Promise<StoredProxy[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": "PROXY#" },
    });
    return items.map((item) => stripKeys<StoredProxy>(item));
  }

  async replace(proxy: ProxyToStore, audit: LogEntry): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Put: {
          TableName: this.tableName,
          Item: this.item(proxy),
          ConditionExpression: "attribute_exists(PK) AND sealed_key = :sealed",
          ExpressionAttributeValues: { ":sealed": proxy.sealed_key },
        },
      },
      this.audit.put(audit),
    ]);
  }

  async reseal(proxy: StoredProxy, next: ProxySeals, audit: LogEntry): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: proxyKeys.proxy(proxy.tenant_id, proxy.id),
          ...sealsUpdate(proxy, next),
        },
      },
      this.audit.put(audit),
    ]);
  }

  async rotateKey(
    proxy: StoredProxy,
    next: ProxySeals & Pick<StoredProxy, "key_hash">,
    audit: LogEntry,
  ): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: proxyKeys.proxy(proxy.tenant_id, proxy.id),
          ...sealsUpdate(proxy, next, { set: "key_hash = :hash", values: { ":hash": next.key_hash } }),
        },
      },
      { Delete: { TableName: this.tableName, Key: proxyKeys.key(proxy.key_hash) } },
      this.keyLookupPut(proxy, next.key_hash),
      this.audit.put(audit),
    ]);
  }

  async delete(proxy: StoredProxy, audit: LogEntry): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: proxyKeys.proxy(proxy.tenant_id, proxy.id),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      { Delete: { TableName: this.tableName, Key: proxyKeys.key(proxy.key_hash) } },
      this.audit.put(audit),
    ]);
  }

  async findByKey(keyHash: string): Promise<StoredProxy | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: proxyKeys.key(keyHash), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const proxy = await this.get(String(out.Item.tenant_id), String(out.Item.proxy_id));
    // The proxy must still hold this key (its lookup item goes with a rotation, in the same write).
    return proxy?.key_hash === keyHash ? proxy : undefined;
  }
}
