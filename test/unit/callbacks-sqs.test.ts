import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSRecord } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCallbackConsumer } from "#functions/reactor-callbacks/handler.ts";
import { JobTooLargeError, MAX_JOB_BYTES, SqsJobQueue } from "#shared/adapters/aws/sqs-job-queue.ts";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { CallbackJob, ReactionOutcome } from "#shared/domain/reactors/callback-job.ts";
import { nodeEgress } from "#shared/egress/egress.ts";
import { reactionFailures } from "#shared/http/problem.ts";

const secret = `whsec_${randomBytes(32).toString("base64")}`;

const sqs = mockClient(SQSClient);
const QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/callbacks";
const DLQ_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/callbacks-dlq";

// The consumer's ports: a fake runner, a fixed secret, an in-memory audit log, SQS (mocked above).
const fake = {
  audit: [] as LogEntry[],
  runs: [] as string[],
  allowPrivate: true,
};
const metrics = new RecordingMetrics();
const outcomes = () =>
  metrics
    .named("CallbackRecords")
    .map((point) => point.dimensions?.outcome)
    .sort();

const handler = createCallbackConsumer(() => ({
  callbacks: {
    runner: {
      run: async (job: CallbackJob): Promise<ReactionOutcome> => {
        fake.runs.push(job.requestId);
        return { status: 200, body: { raw: { answer: 42 } } };
      },
    },
    failures: reactionFailures,
    webhookSecrets: { secret: async () => secret },
    auditLog: {
      append: async (entries: LogEntry[]) => {
        fake.audit.push(...entries);
      },
    },
    clock: { now: () => new Date() },
    egress: nodeEgress,
    delivery: {
      get allowPrivate() {
        return fake.allowPrivate;
      },
      selfHosts: [],
    },
  },
  sqs: new SQSClient({ region: "us-east-1" }),
  queueUrl: QUEUE_URL,
  deadLetterUrl: DLQ_URL,
  metrics,
}));

const job = (requestId: string, callbackUrl: string): CallbackJob => ({
  requestId,
  tenantId: "tenant-1",
  reactorId: "reactor-1",
  callbackUrl,
  timeoutMs: 10_000,
  sealedArgs: "c2VhbGVk",
  actor: { type: "application", id: "app-1" },
  enqueuedAt: new Date().toISOString(),
});

const record = (messageId: string, body: string, receiveCount: number): SQSRecord => ({
  messageId,
  receiptHandle: `receipt-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
    SentTimestamp: String(Date.now()),
    SenderId: "AIDEXAMPLE",
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: "",
  eventSource: "aws:sqs",
  eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:callbacks",
  awsRegion: "us-east-1",
});

const context = {
  awsRequestId: "req-1",
  functionName: "consumer",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:consumer",
  memoryLimitInMB: "512",
  logGroupName: "/aws/lambda/consumer",
  logStreamName: "stream",
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 200_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;

// A loopback receiver: /ok answers 204 after verifying the signature, /fail answers 500.
let server: http.Server;
let base: string;
let received: { path: string; verified: boolean }[];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let verified = false;
      try {
        new Webhook(secret).verify(
          Buffer.concat(chunks).toString("utf8"),
          req.headers as Record<string, string>,
        );
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ path: req.url ?? "", verified });
      res.writeHead(req.url === "/ok" ? 204 : 500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received = [];
  fake.audit.length = 0;
  fake.runs.length = 0;
  fake.allowPrivate = true;
  metrics.clear();
  metrics.flushes = 0;
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({ MessageId: "dlq-1" });
});

afterEach(() => {
  sqs.reset();
});

describe("SqsJobQueue", () => {
  it("sends the job as JSON to the queue, with the arguments only sealed and its tenant as the message group", async () => {
    const queue = new SqsJobQueue(new SQSClient({ region: "us-east-1" }), QUEUE_URL);
    const enqueued = job("r-1", "https://hooks.example/x");
    await queue.enqueue(enqueued);

    const calls = sqs.commandCalls(SendMessageCommand);
    expect(calls).toHaveLength(1);
    // A standard queue's MessageGroupId makes it a fair queue: another tenant's backlog does not delay this one.
    expect(calls[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify(enqueued),
      MessageGroupId: enqueued.tenantId,
    });
    expect(Object.keys(JSON.parse(calls[0]?.args[0].input.MessageBody ?? "{}")).sort()).toEqual(
      Object.keys(enqueued).sort(),
    );
  });

  it("refuses a job larger than a queue message, sending nothing", async () => {
    const queue = new SqsJobQueue(new SQSClient({ region: "us-east-1" }), QUEUE_URL);
    const big = { ...job("r-2", "https://hooks.example/x"), sealedArgs: "a".repeat(MAX_JOB_BYTES) };
    await expect(queue.enqueue(big)).rejects.toBeInstanceOf(JobTooLargeError);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it("passes SQS errors on (react then fails rather than answering 202)", async () => {
    sqs.on(SendMessageCommand).rejects(new Error("throttled"));
    const queue = new SqsJobQueue(new SQSClient({ region: "us-east-1" }), QUEUE_URL);
    await expect(queue.enqueue(job("r-3", "https://hooks.example/x"))).rejects.toThrow("throttled");
  });
});

describe("reactor-callbacks consumer", () => {
  it("reports only the failing record, after setting its visibility to the backoff", async () => {
    const event = {
      Records: [
        record("m-ok", JSON.stringify(job("r-ok", `${base}/ok`)), 1),
        record("m-fail", JSON.stringify(job("r-fail", `${base}/fail`)), 2),
      ],
    };
    const response = await handler(event, context);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-fail" }] });
    const visibility = sqs.commandCalls(ChangeMessageVisibilityCommand);
    expect(visibility.map((c) => c.args[0].input)).toEqual([
      { QueueUrl: QUEUE_URL, ReceiptHandle: "receipt-m-fail", VisibilityTimeout: 120 },
    ]);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(received.map((r) => r.path).sort()).toEqual(["/fail", "/ok"]);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(fake.runs.sort()).toEqual(["r-fail", "r-ok"]);
    expect(fake.audit.map((e) => e.message).sort()).toEqual([
      "Callback delivery attempt 1 for request r-ok: delivered (HTTP 204)",
      "Callback delivery attempt 2 for request r-fail: HTTP 500",
    ]);
    for (const entry of fake.audit)
      expect(entry).toMatchObject({ entity_type: "reactor", entity_id: "reactor-1", operation: "invoke" });
    // One count per record by outcome, written once for the batch.
    expect(outcomes()).toEqual(["delivered", "retry"]);
    expect(metrics.flushes).toBe(1);
  });

  it("makes a record that failed its last attempt visible at once, for the redrive to the DLQ", async () => {
    const response = await handler(
      { Records: [record("m-last", JSON.stringify(job("r-last", `${base}/fail`)), 5)] },
      context,
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-last" }] });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input.VisibilityTimeout).toBe(0);
  });

  it("still reports the failure when the visibility cannot be changed", async () => {
    sqs.on(ChangeMessageVisibilityCommand).rejects(new Error("denied"));
    const response = await handler(
      { Records: [record("m-x", JSON.stringify(job("r-x", `${base}/fail`)), 1)] },
      context,
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-x" }] });
  });

  it("sends a malformed job and a refused destination to the DLQ at once and reports them processed", async () => {
    fake.allowPrivate = false;
    const refused = JSON.stringify(job("r-refused", `https://127.0.0.1:${new URL(base).port}/ok`));
    const response = await handler(
      { Records: [record("m-bad", "{not json", 1), record("m-refused", refused, 1)] },
      context,
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(received).toEqual([]);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
    const sent = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sent.map((input) => [input.QueueUrl, input.MessageBody])).toEqual(
      expect.arrayContaining([
        [DLQ_URL, "{not json"],
        [DLQ_URL, refused],
      ]),
    );
    const reasons = sent.map((input) => input.MessageAttributes?.["svc-dead-letter-reason"]?.StringValue);
    expect(reasons).toEqual(expect.arrayContaining(["The queued job is not JSON."]));
    expect(reasons.some((reason) => reason?.startsWith("refused:"))).toBe(true);
    expect(fake.audit.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Callback delivery attempt 1 for request r-refused: refused: /),
    ]);
    expect(outcomes()).toEqual(["dead_letter", "dead_letter"]);
  });

  it("retries a record whose dead-lettering failed", async () => {
    sqs.on(SendMessageCommand).rejects(new Error("denied"));
    const response = await handler({ Records: [record("m-bad", "{not json", 1)] }, context);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-bad" }] });
  });

  it("answers a batch whose every record failed instead of throwing", async () => {
    const response = await handler(
      {
        Records: [
          record("a", JSON.stringify(job("r-a", `${base}/fail`)), 1),
          record("b", JSON.stringify(job("r-b", `${base}/fail`)), 3),
        ],
      },
      context,
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(["a", "b"]);
    const timeouts = sqs
      .commandCalls(ChangeMessageVisibilityCommand)
      .map((c) => c.args[0].input.VisibilityTimeout);
    expect(timeouts.sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual([60, 240]);
  });
});
