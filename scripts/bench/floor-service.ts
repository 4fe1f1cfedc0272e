/**
 * The benchmark's floor: the service's own store writes, and the least work a correct vault with a fail-closed
 * audit log does around them, with no framework (docs/performance.md, "The floors").
 *
 *   POST /tokens      seal the data + its fingerprint (HMAC) → the service's create transaction for a card
 *                     (DynamoTokenStore.create: the token item as the service stores it, its key-set counter and
 *                     its audit entry, in one TransactWriteItems)
 *   GET  /tokens/{id} DynamoTokenStore.get (GetItem, consistent) + open + PutItem of the log entry, then answer
 *                     the token's fields as the service does (revealed)
 *
 * and, for the proxy scenario, the proxy floor: a proxy to `destinationUrl` sending it `{"card": <data>}`:
 *
 *   POST /proxy/{id}  the read's store calls and opening, then forward (keep-alive, as the service does within a
 *                     tenant) and answer the destination's response
 *
 * It reuses the service's own crypto and storage pieces (Sealer, Keyring with its cached data keys, the local
 * master-key wrapper, the DynamoDB document client, DynamoTokenStore, DynamoAuditLogStore) so that the difference
 * with the service is the framework and the service's checks, not different store calls. It authenticates
 * nothing, validates only that the body is JSON with a `type` and `data`, renders no expression (the card's
 * fingerprint is its number, as the default expression renders it) and answers data unmasked: the service does all
 * of that, and that is part of what the benchmark measures.
 */
import { randomUUID } from "node:crypto";
import {
  Agent,
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { systemClock } from "#shared/adapters/clock.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { DynamoTokenStore } from "#shared/adapters/dynamodb/token-store.ts";
import { loadOrCreateMasterKey, MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { auditEntry } from "#shared/domain/audit-entry.ts";
import { Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import { type TokenType, typeSpec } from "#shared/domain/tokens/types.ts";
import { uuidv7 } from "#shared/ids.ts";

export interface FloorServiceOptions {
  dynamodbEndpoint: string;
  /** Holds the floor's own local master key file. */
  dataDir: string;
  /** The proxy scenario's destination (POST /proxy/{id} forwards there); without it, 404. */
  destinationUrl?: string;
}

export interface FloorService {
  url: string;
  /** The floor's DynamoDB client (the benchmark may time its calls). */
  dynamo: DynamoDBDocumentClient;
  stop(): Promise<void>;
}

/**
 * The floor serves one fixed tenant: it has no keys to tell tenants apart. Its tenant and application ids have the
 * shape of the service's (UUIDv7, made as the service makes them), so its items, keys and answers are the size of
 * the service's: with short names the floor's create transaction was 190 bytes (a tenth) smaller and each of its
 * reads' items and answers smaller too, charging id length to the framework.
 */
export const FLOOR_TENANT_ID = uuidv7(new Date());
const FLOOR_ACTOR = { type: "application" as const, id: uuidv7(new Date()) };
const MAX_BODY_BYTES = 1024 * 1024;
const TOKEN_PATH = /^\/tokens\/([^/?#]+)$/;
const PROXY_PATH = /^\/proxy\/([^/?#]+)$/;

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new Error("too large"));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** POSTs `body` to `url` on `agent`'s connections; resolves with the status and body. */
function post(
  url: URL,
  agent: Agent,
  body: Buffer,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 502,
            contentType: String(res.headers["content-type"] ?? "application/octet-stream"),
            body: Buffer.concat(chunks),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function relay(res: ServerResponse, answer: { status: number; contentType: string; body: Buffer }): void {
  res.writeHead(answer.status, { "content-type": answer.contentType, "content-length": answer.body.length });
  res.end(answer.body);
}

export async function startFloorService(options: FloorServiceOptions): Promise<FloorService> {
  // A table of its own, named as long as the service's ("svc-vault"): the name is in every call's payload.
  const tableName = "svc-floor";
  const client = createDocumentClient({ region: "us-east-1", endpoint: options.dynamodbEndpoint });
  await ensureTable(client, tableName);
  const audit = new AuditItems(tableName, 365);
  const keyring = new Keyring(
    new MasterKeyWrapper(loadOrCreateMasterKey(join(options.dataDir, "master.key"))),
    new DynamoDataKeyStore(client, tableName, () => systemClock.now()),
    systemClock,
  );
  const sealer = new Sealer(keyring);

  const tokens = new DynamoTokenStore(client, tableName, audit);
  const log = new DynamoAuditLogStore(client, tableName, audit);

  const entry = (tokenId: string, type: string, operation: "create" | "read", now: Date) =>
    auditEntry(now, FLOOR_ACTOR, {
      tenantId: FLOOR_TENANT_ID,
      entityType: type === "card" ? "card" : type === "bank" ? "bank" : "token",
      entityId: tokenId,
      operation,
      message: operation === "create" ? "Token created" : "Token read",
    });

  async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req)).toString("utf8"));
    } catch {
      return reply(res, 400, { title: "Bad Request", status: 400 });
    }
    const { type, data } = (body ?? {}) as { type?: unknown; data?: unknown };
    if (typeof type !== "string" || data === undefined)
      return reply(res, 400, { title: "Bad Request", status: 400 });
    const id = randomUUID();
    const now = systemClock.now();
    const spec = typeSpec(type as TokenType);
    // The card's default fingerprint expression renders its number; other types their data as JSON.
    const number = (data as { number?: unknown }).number;
    const rendered = type === "card" && typeof number === "string" ? number : JSON.stringify(data);
    const token: StoredToken = {
      id,
      tenant_id: FLOOR_TENANT_ID,
      type: type as TokenType,
      container: spec.container,
      sealed_data: await sealer.seal(
        { tenantId: FLOOR_TENANT_ID, tokenId: id, field: "data" },
        JSON.stringify(data),
      ),
      ...(spec.mask !== undefined ? { mask: spec.mask } : {}),
      fingerprint: await sealer.tokenHash(FLOOR_TENANT_ID, type, rendered),
      fingerprint_expression: spec.fingerprint,
      created_by: FLOOR_ACTOR.id,
      created_at: now.toISOString(),
      version: 1,
    };
    await tokens.create(token, { deduplicate: false, now }, entry(id, type, "create", now));
    reply(res, 201, { id, type, created_at: token.created_at });
  }

  /** GetItem + open + PutItem of the log entry (fail-closed: logged before the data is used). */
  async function readLogged(id: string) {
    const token = await tokens.get(FLOOR_TENANT_ID, id);
    if (!token) return undefined;
    const data: unknown = JSON.parse(
      await sealer.open({ tenantId: FLOOR_TENANT_ID, tokenId: id, field: "data" }, token.sealed_data),
    );
    await log.append([entry(id, token.type, "read", systemClock.now())]);
    return { token, data };
  }

  async function read(id: string, res: ServerResponse): Promise<void> {
    const found = await readLogged(id);
    if (!found) return reply(res, 404, { title: "Not Found", status: 404 });
    const { token, data } = found;
    reply(res, 200, {
      id,
      tenant_id: token.tenant_id,
      type: token.type,
      data,
      mask: token.mask,
      fingerprint: token.fingerprint,
      fingerprint_expression: token.fingerprint_expression,
      containers: [token.container],
      created_by: token.created_by,
      created_at: token.created_at,
    });
  }

  const destination = options.destinationUrl ? new URL(options.destinationUrl) : undefined;
  const agent = new Agent({ keepAlive: true });

  async function proxy(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume();
    const found = destination ? await readLogged(id) : undefined;
    if (!destination || !found) return reply(res, 404, { title: "Not Found", status: 404 });
    relay(res, await post(destination, agent, Buffer.from(JSON.stringify({ card: found.data }))));
  }

  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    let work: Promise<void>;
    if (req.method === "POST" && path === "/tokens") work = create(req, res);
    else if (req.method === "GET" && TOKEN_PATH.test(path))
      work = read(decodeURIComponent(TOKEN_PATH.exec(path)?.[1] ?? ""), res);
    else if (req.method === "POST" && PROXY_PATH.test(path))
      work = proxy(decodeURIComponent(PROXY_PATH.exec(path)?.[1] ?? ""), req, res);
    else {
      req.resume();
      work = Promise.resolve(reply(res, 404, { title: "Not Found", status: 404 }));
    }
    work.catch(() => {
      if (!res.headersSent) reply(res, 500, { title: "Internal Server Error", status: 500 });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dynamo: client,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      client.destroy();
    },
  };
}
