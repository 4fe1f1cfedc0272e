import { randomBytes, randomUUID } from "node:crypto";

/** One logical write: its idempotency key and body never change across its retries. */
export interface Write {
  key: string;
  writer: number;
  seq: number;
  data: { writer: number; seq: number; payload: string };
  attempts: number;
  /** acknowledged: a 201 answered (with the token's id); refused: a final 4xx; abandoned: retries ran out. */
  outcome?:
    | { kind: "acknowledged"; id: string }
    | { kind: "refused"; status: number }
    | { kind: "abandoned" };
}

/** One HTTP attempt of a write: `answered` is set once any HTTP answer arrived, `failed` on a connection error. */
export interface Attempt {
  write: Write;
  startedAt: number;
  answered?: number;
  failed?: string;
}

export interface LoadOptions {
  url: string;
  /** A key that may create and read tokens (and reveal their data). */
  key: string;
  writers: number;
  /** How long one write is retried before it is abandoned (the idempotency marker lapses after 60 s). */
  retryForMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry after these answers, with the same key and body: the write may or may not have happened. */
function retryable(status: number, body: string): boolean {
  if (status === 429 || status >= 500) return true;
  return status === 409 && body.includes("still being processed");
}

/**
 * Writers that each create one token after another, with an idempotency key per write, retrying a write that
 * got no answer, a 5xx, a 429 or an "in progress" 409 until it is answered (as a careful client does).
 */
export class Load {
  readonly writes: Write[] = [];
  readonly inFlight = new Set<Attempt>();
  /** Every attempt's outcome: an HTTP status, or the connection error's name. */
  readonly answers = new Map<string, number>();
  private stopping = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.loops = Array.from({ length: this.options.writers }, (_, writer) => this.run(writer));
  }

  /** No new writes; those under way are retried to their end. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  private async run(writer: number): Promise<void> {
    for (let seq = 0; !this.stopping; seq++) {
      const write: Write = {
        key: randomUUID(),
        writer,
        seq,
        data: { writer, seq, payload: randomBytes(12).toString("base64url") },
        attempts: 0,
      };
      this.writes.push(write);
      await this.complete(write);
    }
  }

  private count(outcome: string): void {
    this.answers.set(outcome, (this.answers.get(outcome) ?? 0) + 1);
  }

  private async complete(write: Write): Promise<void> {
    const giveUpAt = Date.now() + this.options.retryForMs;
    while (Date.now() < giveUpAt) {
      write.attempts += 1;
      const attempt: Attempt = { write, startedAt: Date.now() };
      this.inFlight.add(attempt);
      try {
        const res = await fetch(`${this.options.url}/tokens`, {
          method: "POST",
          headers: {
            "svc-api-key": this.options.key,
            "svc-idempotency-key": write.key,
            "content-type": "application/json",
          },
          body: JSON.stringify({ type: "token", data: write.data }),
          signal: AbortSignal.timeout(30_000),
        });
        const body = await res.text();
        attempt.answered = res.status;
        this.count(String(res.status));
        if (res.status === 201) {
          write.outcome = { kind: "acknowledged", id: (JSON.parse(body) as { id: string }).id };
          return;
        }
        if (!retryable(res.status, body)) {
          write.outcome = { kind: "refused", status: res.status };
          return;
        }
      } catch (error) {
        const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
        attempt.failed = cause?.code ?? (error instanceof Error ? error.name : "error");
        this.count(attempt.failed);
      } finally {
        this.inFlight.delete(attempt);
      }
      await sleep(200 + Math.random() * 300);
    }
    write.outcome = { kind: "abandoned" };
  }
}

export interface Verdict {
  writes: number;
  acknowledged: number;
  verified: number;
  lost: number;
  corrupt: number;
  duplicated: number;
  refused: number;
  abandoned: number;
  retried: number;
}

interface StoredToken {
  id: string;
  data?: unknown;
}

/**
 * Reads back every acknowledged write (lost: not found; corrupt: other data), then lists the tenant's tokens and
 * counts the writes stored more than once (duplicated: the extra copies).
 */
export async function verify(url: string, key: string, writes: Write[]): Promise<Verdict> {
  const get = async (path: string) => {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${url}${path}`, { headers: { "svc-api-key": key } }).catch(() => undefined);
      if (res && res.status < 500) return { status: res.status, body: (await res.json()) as unknown };
      if (attempt >= 20) throw new Error(`GET ${path} kept failing`);
      await sleep(500);
    }
  };
  const verdict: Verdict = {
    writes: writes.length,
    acknowledged: 0,
    verified: 0,
    lost: 0,
    corrupt: 0,
    duplicated: 0,
    refused: writes.filter((w) => w.outcome?.kind === "refused").length,
    abandoned: writes.filter((w) => w.outcome?.kind === "abandoned").length,
    retried: writes.filter((w) => w.attempts > 1).length,
  };
  for (const write of writes) {
    if (write.outcome?.kind !== "acknowledged") continue;
    verdict.acknowledged += 1;
    const read = await get(`/tokens/${write.outcome.id}`);
    if (read.status === 404) verdict.lost += 1;
    else if (JSON.stringify((read.body as StoredToken).data) === JSON.stringify(write.data))
      verdict.verified += 1;
    else verdict.corrupt += 1;
  }
  const copies = new Map<string, number>();
  for (let page = 1; ; page++) {
    const listed = (await get(`/tokens?size=100&page=${page}`)).body as {
      data: StoredToken[];
      pagination: { total_pages: number };
    };
    for (const token of listed.data) {
      const data = token.data as { writer?: number; seq?: number } | undefined;
      const id = `${data?.writer}/${data?.seq}`;
      copies.set(id, (copies.get(id) ?? 0) + 1);
    }
    if (page >= listed.pagination.total_pages || listed.data.length === 0) break;
  }
  for (const count of copies.values()) if (count > 1) verdict.duplicated += count - 1;
  return verdict;
}
