/**
 * The benchmark's floor: the least a correct vault with a fail-closed audit log must do per request
 * (docs/performance.md, "The floors").
 *
 *   POST /tokens      seal the data + PutItem of the token ‖ PutItem of its log entry (in parallel)
 *   GET  /tokens/{id} GetItem + open + PutItem of the log entry, then answer
 *
 * and, for the proxy scenario, the proxy floor: a proxy to `destinationUrl` sending it `{"card": <data>}`:
 *
 *   POST /proxy/{id}  GetItem + open + PutItem of the log entry, then forward (keep-alive, as the service does
 *                     within a tenant) and answer the destination's response
 *
 * It reuses the service's own crypto and storage pieces (Sealer, Keyring with its cached data keys, the
 * local master-key wrapper, the DynamoDB document client, AuditItems) so that the difference with the
 * service is the service's extra work, not a different implementation of the mandatory part. It
 * authenticates nothing, validates only that the body is JSON with a `type` and `data`, and renders no
 * mask: the service does all of that, and that is part of what the benchmark measures.
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
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { systemClock } from "#shared/adapters/clock.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { loadOrCreateMasterKey, MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { auditEntry } from "#shared/domain/audit-entry.ts";
import { Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";

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

/** The floor serves one fixed tenant: it has no keys to tell tenants apart. */
export const FLOOR_TENANT_ID = "floor-tenant";
const FLOOR_ACTOR = { type: "application" as const, id: "floor-application" };
const MAX_BODY_BYTES = 1024 * 1024;
const TOKEN_PATH = /^\/tokens\/([^/?#]+)$/;
const PROXY_PATH = /^\/proxy\/([^/?#]+)$/;

const tokenKey = (id: string) => ({ PK: `TOKEN#${FLOOR_TENANT_ID}#${id}`, SK: "META" });

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
  const tableName = "svc-bench-floor";
  const client = createDocumentClient({ region: "us-east-1", endpoint: options.dynamodbEndpoint });
  await ensureTable(client, tableName);
  const audit = new AuditItems(tableName, 365);
  const keyring = new Keyring(
    new MasterKeyWrapper(loadOrCreateMasterKey(join(options.dataDir, "master.key"))),
    new DynamoDataKeyStore(client, tableName, () => systemClock.now()),
    systemClock,
  );
  const sealer = new Sealer(keyring);

  const logItem = (tokenId: string, type: string, operation: "create" | "read", now: Date) =>
    audit.item(
      auditEntry(now, FLOOR_ACTOR, {
        tenantId: FLOOR_TENANT_ID,
        entityType: type === "card" ? "card" : type === "bank" ? "bank" : "token",
        entityId: tokenId,
        operation,
        message: operation === "create" ? "Token created" : "Token read",
      }),
    );

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
    const sealed_data = await sealer.seal(
      { tenantId: FLOOR_TENANT_ID, tokenId: id, field: "data" },
      JSON.stringify(data),
    );
    const created_at = now.toISOString();
    await Promise.all([
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...tokenKey(id), entity: "token", id, type, sealed_data, created_at },
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      ),
      client.send(new PutCommand({ TableName: tableName, Item: logItem(id, type, "create", now) })),
    ]);
    reply(res, 201, { id, type, created_at });
  }

  /** GetItem + open + PutItem of the log entry (fail-closed: logged before the data is used). */
  async function readLogged(id: string) {
    const out = await client.send(
      new GetCommand({ TableName: tableName, Key: tokenKey(id), ConsistentRead: true }),
    );
    const item = out.Item as { type: string; sealed_data: string; created_at: string } | undefined;
    if (!item) return undefined;
    const data: unknown = JSON.parse(
      await sealer.open({ tenantId: FLOOR_TENANT_ID, tokenId: id, field: "data" }, item.sealed_data),
    );
    await client.send(
      new PutCommand({ TableName: tableName, Item: logItem(id, item.type, "read", systemClock.now()) }),
    );
    return { ...item, data };
  }

  async function read(id: string, res: ServerResponse): Promise<void> {
    const token = await readLogged(id);
    if (!token) return reply(res, 404, { title: "Not Found", status: 404 });
    reply(res, 200, { id, type: token.type, data: token.data, created_at: token.created_at });
  }

  const destination = options.destinationUrl ? new URL(options.destinationUrl) : undefined;
  const agent = new Agent({ keepAlive: true });

  async function proxy(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume();
    const token = destination ? await readLogged(id) : undefined;
    if (!destination || !token) return reply(res, 404, { title: "Not Found", status: 404 });
    relay(res, await post(destination, agent, Buffer.from(JSON.stringify({ card: token.data }))));
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
