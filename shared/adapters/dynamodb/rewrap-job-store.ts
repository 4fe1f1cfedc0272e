import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { RewrapJob, RewrapJobStore } from "#shared/ports/key-versions.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { ignoreConditionFailed, isConditionalCheckFailed, transactOrFalse } from "./client.ts";

const jobKey = (tenantId: string, id: string) => ({ PK: `TENANT#${tenantId}`, SK: `REWRAP#${id}` });
/** The tenant's latest job, by id: the one item every start conditions on, so a tenant runs one job at a time. */
const latestKey = (tenantId: string) => ({ PK: `TENANT#${tenantId}`, SK: "REWRAPLATEST" });

/** Rewrap jobs under the tenant's partition: progress is stored with the job, so a re-delivered page resumes it. */
export class DynamoRewrapJobStore implements RewrapJobStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async create(job: RewrapJob, audit: LogEntry, previous?: RewrapJob): Promise<boolean> {
    const tenantId = job.tenant_id;
    const latest = {
      TableName: this.tableName,
      Item: { ...latestKey(tenantId), entity: "rewrap_latest", job_id: job.id },
      ...(previous
        ? {
            ConditionExpression: "job_id = :previous",
            ExpressionAttributeValues: { ":previous": previous.id },
          }
        : { ConditionExpression: "attribute_not_exists(PK)" }),
    };
    // A stalled job ends as it is (no page of it moved on since it was read): its late pages then stop.
    const ended = previous?.status === "running" && {
      Update: {
        TableName: this.tableName,
        Key: jobKey(tenantId, previous.id),
        UpdateExpression: "SET #status = :failed, finished_at = :now",
        ConditionExpression: "#status = :running AND page = :page",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":failed": "failed",
          ":now": job.created_at,
          ":running": "running",
          ":page": previous.page,
        },
      },
    };
    return transactOrFalse(this.client, [
      {
        Put: {
          TableName: this.tableName,
          Item: { ...jobKey(tenantId, job.id), entity: "rewrap_job", ...job },
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
      { Put: latest },
      ...(ended ? [ended] : []),
      this.audit.put(audit),
    ]);
  }

  async latest(tenantId: string): Promise<RewrapJob | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: latestKey(tenantId), ConsistentRead: true }),
    );
    const id = out.Item?.job_id;
    return typeof id === "string" ? this.get(tenantId, id) : undefined;
  }

  async get(tenantId: string, id: string): Promise<RewrapJob | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: jobKey(tenantId, id), ConsistentRead: true }),
    );
    return out.Item ? stripKeys<RewrapJob>(out.Item) : undefined;
  }

  async advance(
    tenantId: string,
    id: string,
    page: number,
    progress: { cursor?: string; done: number; skipped: number; at: Date },
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobKey(tenantId, id),
          UpdateExpression:
            progress.cursor === undefined
              ? "SET page = :next, done = :done, skipped = :skipped, progressed_at = :at, #end = :yes REMOVE #cursor"
              : "SET page = :next, done = :done, skipped = :skipped, progressed_at = :at, #cursor = :cursor",
          ConditionExpression: "page = :page AND #status = :running",
          ExpressionAttributeNames: {
            "#status": "status",
            "#cursor": "cursor",
            ...(progress.cursor === undefined ? { "#end": "end" } : {}),
          },
          ExpressionAttributeValues: {
            ":page": page,
            ":next": page + 1,
            ":done": progress.done,
            ":skipped": progress.skipped,
            ":at": progress.at.toISOString(),
            ":running": "running",
            ...(progress.cursor === undefined ? { ":yes": true } : { ":cursor": progress.cursor }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async markSent(tenantId: string, id: string, page: number): Promise<void> {
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobKey(tenantId, id),
          UpdateExpression: "SET sent = :page",
          ConditionExpression: "sent < :page",
          ExpressionAttributeValues: { ":page": page },
        }),
      )
      .catch(ignoreConditionFailed);
  }

  async finish(tenantId: string, id: string, status: "succeeded" | "failed", audit: LogEntry, now: Date) {
    return transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: jobKey(tenantId, id),
          UpdateExpression: "SET #status = :status, finished_at = :now",
          ConditionExpression: "#status = :running",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":status": status, ":now": now.toISOString(), ":running": "running" },
        },
      },
      this.audit.put(audit),
    ]);
  }
}
