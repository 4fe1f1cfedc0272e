/**
 * Published AWS list prices `npm run cost` multiplies its measurements by: one region, the first (most
 * expensive) volume tier of each service, no free tier, no savings plan. Change them here, with the date.
 */
export const PRICES = {
  region: "us-east-1 (N. Virginia)",
  /** When these figures were taken from the pages below. */
  asOf: "2026-11-26",
  apiGateway: {
    /** HTTP API, per million requests (first 300 million a month; each 512 KB of a request counts as one). */
    perMillionRequests: 1.0,
    source: "https://aws.amazon.com/api-gateway/pricing/",
  },
  lambda: {
    /** Per million invocations. */
    perMillionRequests: 0.2,
    /** arm64 duration, per GB-second (first 7.5 billion GB-s a month). */
    perGbSecondArm64: 0.0000133334,
    /** The memory at which a function gets one whole vCPU: below it, CPU time stretches by 1769 / memory. */
    fullVcpuMemoryMb: 1769,
    source: "https://aws.amazon.com/lambda/pricing/",
  },
  dynamodb: {
    /** On-demand, per million write request units (1 KB each; transactional writes count 2). */
    perMillionWriteUnits: 0.625,
    /** On-demand, per million read request units (4 KB strongly consistent; eventually consistent ½). */
    perMillionReadUnits: 0.125,
    /** Standard table class storage, per GB-month (the first 25 GB are free). */
    perGbMonthStorage: 0.25,
    source: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
  },
  kms: {
    /** Per million API requests (GenerateDataKey, Decrypt): $0.03 per 10,000. */
    perMillionRequests: 3.0,
    source: "https://aws.amazon.com/kms/pricing/",
  },
  sqs: {
    /** Standard queue, per million requests (each 64 KB chunk of a payload is one). */
    perMillionRequests: 0.4,
    /**
     * Requests per message: SendMessage, the Lambda event source mapping's ReceiveMessage and DeleteMessage
     * (batched by the mapping at up to 10; counted here as 1 each, the worst case of one message per batch).
     */
    requestsPerMessage: 3,
    source: "https://aws.amazon.com/sqs/pricing/",
  },
  cloudWatchLogs: {
    /** Ingestion per GB (standard class; Lambda's logs are billed as vended logs, from the same $0.50). */
    perGbIngested: 0.5,
    /**
     * Lambda's own lines per invocation (START, END and REPORT with the X-Ray trace id), bytes: not produced
     * locally, so a typical size is assumed.
     */
    platformLineBytes: 420,
    source: "https://aws.amazon.com/cloudwatch/pricing/",
  },
  xray: {
    /** Per million traces recorded. */
    perMillionTraces: 5.0,
    /** The default sampling rule: the first request each second, then 5 %; at volume about 5 %. */
    sampledShare: 0.05,
    source: "https://aws.amazon.com/xray/pricing/",
  },
  /** In-region DynamoDB round trip from Lambda (one request to the table and its answer), ms: the high duration. */
  dynamodbRoundTripMs: 5,
} as const;
