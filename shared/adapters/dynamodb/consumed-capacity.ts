import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/** What a run of requests cost the table, as DynamoDB bills it. */
export interface CapacityTotals {
  /** Read capacity units (transactional reads at 2×, eventually consistent at ½, as DynamoDB reports them). */
  readUnits: number;
  /** Write capacity units (transactional writes at 2×; GSI writes included). */
  writeUnits: number;
  /** Table calls made. */
  calls: number;
  /** Calls started while no other call was in flight: the sequential round trips of a request. */
  serialCalls: number;
  /** Size of the items put (PutItem, a transaction's Put, BatchWriteItem), by DynamoDB's item size rules. */
  itemBytesPut: number;
  /** Items put. */
  itemsPut: number;
  /** Of writeUnits, what the global secondary index's copies of the items cost. */
  indexWriteUnits: number;
}

/** One table call, for a trace of where a request's capacity goes (`npm run cost` with COST_TRACE=1). */
export interface MeteredCall {
  command: string;
  readUnits: number;
  writeUnits: number;
  /** Each item put: the first part of its partition key (its kind) and its size. */
  puts: { kind: string; bytes: number }[];
  /** Other actions of a transaction or batch: Update, Delete, ConditionCheck with their key's kind. */
  actions: string[];
}

const READS = new Set(["GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"]);

const empty = (): CapacityTotals => ({
  readUnits: 0,
  writeUnits: 0,
  calls: 0,
  serialCalls: 0,
  itemBytesPut: 0,
  itemsPut: 0,
  indexWriteUnits: 0,
});

/**
 * Sums the capacity every call of one document client consumes: asks each call for `ReturnConsumedCapacity:
 * INDEXES` and adds up what comes back. Only the cost run (scripts/cost.ts) installs it, through the table's
 * composition; the service never asks DynamoDB for capacity figures otherwise.
 *
 * Two corrections to what DynamoDB Local reports, so the sums are what DynamoDB bills:
 * - A write transaction: Local reports 4 × the transaction's total size rounded up to 1 KB (one tiny item: 4 WCU,
 *   two tiny items: 4 WCU), where DynamoDB bills each item at 2 × its own size in 1 KB units. So a transaction is
 *   counted here item by item: a Put at 2 × ceil(size / 1 KB), plus as much again for its copy in the index when
 *   it carries the index's keys (the index's share of a transaction is not documented separately: counted at the
 *   transactional rate, the higher reading); an Update, Delete or ConditionCheck at 2 (items of up to 1 KB; the
 *   sizes of items not sent are not known here).
 * - A conditional write whose condition fails returns no figures, but DynamoDB still bills it: 1 WCU per item (a
 *   cancelled transaction: what its items would have cost).
 */
export class CapacityMeter {
  private totals = empty();
  private inFlight = 0;
  /** Called with each call's figures (a trace), when set. */
  onCall: ((call: MeteredCall) => void) | undefined;

  /** The totals since the last take, and a fresh start. */
  take(): CapacityTotals {
    const taken = this.totals;
    this.totals = empty();
    return taken;
  }

  install(client: DynamoDBDocumentClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName ?? "").replace(/Command$/, "");
        // INDEXES: the same total, with the index's share of it.
        const input = { ...(args.input as Record<string, unknown>), ReturnConsumedCapacity: "INDEXES" };
        const call: MeteredCall = { command, readUnits: 0, writeUnits: 0, puts: [], actions: [] };
        this.countPuts(input, call);
        this.totals.calls += 1;
        if (this.inFlight === 0) this.totals.serialCalls += 1;
        this.inFlight += 1;
        try {
          const result = await next({ ...args, input });
          if (command === "TransactWriteItems") this.addTransaction(input, call);
          else this.add(command, (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity, call);
          return result;
        } catch (error) {
          this.addFailed(error, input, call);
          throw error;
        } finally {
          this.inFlight -= 1;
          this.onCall?.(call);
        }
      },
      // Inside the idempotency-effect and conflict-retry steps, so each attempt is counted with what it carries.
      { step: "initialize", name: "meterConsumedCapacity", priority: "low" },
    );
  }

  private add(command: string, consumed: unknown, call: MeteredCall): void {
    const entries = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as ConsumedEntry[];
    for (const entry of entries) {
      const split = entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined;
      const read = split
        ? (entry.ReadCapacityUnits ?? 0)
        : READS.has(command)
          ? (entry.CapacityUnits ?? 0)
          : 0;
      const write = split
        ? (entry.WriteCapacityUnits ?? 0)
        : READS.has(command)
          ? 0
          : (entry.CapacityUnits ?? 0);
      call.readUnits += read;
      call.writeUnits += write;
      if (write > 0)
        for (const index of Object.values(entry.GlobalSecondaryIndexes ?? {}))
          this.totals.indexWriteUnits += index.WriteCapacityUnits ?? index.CapacityUnits ?? 0;
    }
    this.totals.readUnits += call.readUnits;
    this.totals.writeUnits += call.writeUnits;
  }

  private addFailed(error: unknown, input: Record<string, unknown>, call: MeteredCall): void {
    const name = error instanceof Error ? error.name : "";
    if (name === "ConditionalCheckFailedException") call.writeUnits += 1;
    call.actions.push(`failed: ${name}`);
    if (name === "TransactionCanceledException") this.addTransaction(input, call);
    else this.totals.writeUnits += call.writeUnits;
  }

  /** A write transaction as DynamoDB bills it: each item at 2 × its size in 1 KB units (see the class's note). */
  private addTransaction(input: Record<string, unknown>, call: MeteredCall): void {
    for (const action of (input.TransactItems as Record<string, { Item?: Record<string, unknown> }>[]) ??
      []) {
      const put = action.Put?.Item;
      if (!put) {
        call.writeUnits += 2;
        continue;
      }
      const units = 2 * Math.max(1, Math.ceil(itemSize(put) / 1024));
      call.writeUnits += units;
      if (put.GSI1PK !== undefined && put.GSI1SK !== undefined) {
        call.writeUnits += units;
        this.totals.indexWriteUnits += units;
      }
    }
    this.totals.writeUnits += call.writeUnits;
  }

  private countPuts(input: Record<string, unknown>, call: MeteredCall): void {
    const items: unknown[] = [];
    if (input.Item) items.push(input.Item);
    for (const action of (input.TransactItems as
      | Record<string, { Item?: unknown; Key?: unknown }>[]
      | undefined) ?? []) {
      for (const [kind, body] of Object.entries(action))
        if (kind === "Put" && body.Item) items.push(body.Item);
        else call.actions.push(`${kind} ${keyKind(body.Key)}`);
    }
    const batches = (input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item?: unknown } }[]>;
    for (const requests of Object.values(batches))
      for (const request of Array.isArray(requests) ? requests : [])
        if (request.PutRequest?.Item) items.push(request.PutRequest.Item);
    for (const item of items) {
      const bytes = itemSize(item as Record<string, unknown>);
      this.totals.itemsPut += 1;
      this.totals.itemBytesPut += bytes;
      call.puts.push({ kind: keyKind(item), bytes });
    }
  }
}

interface ConsumedEntry {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number; WriteCapacityUnits?: number }>;
}

/** What kind of item a key names: the upper-case words of its keys (ids and times left out), e.g. TENANT.LOG/. */
function keyKind(key: unknown): string {
  const words = (value: unknown) =>
    typeof value === "string"
      ? value
          .split("#")
          .filter((part) => /^[A-Z_]+$/.test(part))
          .join(".")
      : "?";
  const { PK, SK } = (key ?? {}) as { PK?: unknown; SK?: unknown };
  return `${words(PK)}/${words(SK)}`;
}

/** An item's size as DynamoDB counts it: each attribute's name plus its value (document form, before marshalling). */
export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    size += Buffer.byteLength(name) + valueSize(value);
  }
  return size;
}

function valueSize(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value);
  if (typeof value === "number" || typeof value === "bigint") {
    const digits = String(value).replace(/^-/, "").replace(/[.]/, "").replace(/e.*$/i, "").replace(/^0+/, "");
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if (typeof value === "boolean" || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + valueSize(v), 0);
  // Lists and maps: 3 bytes of overhead and 1 per element, as DynamoDB counts them.
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === "object")
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (sum, [k, v]) => sum + (v === undefined ? 0 : 1 + Buffer.byteLength(k) + valueSize(v)),
        0,
      )
    );
  return 0;
}
