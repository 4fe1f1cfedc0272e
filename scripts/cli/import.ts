/**
 * `svc-vault import`: token requests from a JSONL or CSV file, sent through POST /tokenize in batches with
 * bounded concurrency. Resumable (import-state.ts), idempotent per batch (SVC-IDEMPOTENCY-KEY derived from the
 * file's SHA-256, the batch size and the batch number), with a mapping file (line, external id → token id) and
 * a summary that names failed lines by number and the service's problem detail, never their data.
 */
import { createHash, createHmac } from "node:crypto";
import { createReadStream, existsSync, statSync } from "node:fs";
import { type ApiOptions, CliError, fromServer, problemOf, request, stopOn } from "./api.ts";
import {
  type BatchRecord,
  type Failure,
  loadState,
  recordBatch,
  recordSend,
  type StateHeader,
} from "./import-state.ts";
import { appendOutput, readOwnLines, truncateOutput, writeOutput } from "./output-files.ts";
import { Progress, type ProgressStream } from "./progress.ts";
import { formatOf, type InputRecord, readRecords } from "./records.ts";
import { lockRun } from "./run-lock.ts";

export const MAX_BATCH = 250; // POST /tokenize's limit (shared/domain/tokens/tokenize.ts)

export interface ImportOptions extends Pick<ApiOptions, "url" | "key" | "sleep" | "signal"> {
  file: string;
  batchSize?: number;
  concurrency?: number;
  idColumn?: string;
  mappingFile?: string;
  stateFile?: string;
  summaryFile?: string;
  progress?: ProgressStream;
  /** Called after each batch is recorded (tests interrupt an import with it). */
  onBatch?: (batch: number) => void;
}

export interface ImportSummary {
  file: string;
  records: number;
  created: number;
  deduplicated: number;
  failed: Failure[];
  mapping_file: string;
  state_file: string;
  summary_file: string;
  resumed_batches: number;
}

/** The file's SHA-256 and its count of non-empty lines, in one streaming pass. */
async function fingerprint(file: string): Promise<{ sha256: string; lines: number }> {
  const hash = createHash("sha256");
  let lines = 0;
  let lineHasText = false;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    for (const byte of chunk) {
      if (byte === 10) {
        if (lineHasText) lines++;
        lineHasText = false;
      } else if (byte !== 13 && byte !== 32) lineHasText = true;
    }
  }
  if (lineHasText) lines++;
  return { sha256: hash.digest("hex"), lines };
}

/**
 * A mapping cell. A value a spreadsheet would read as a formula (=, +, -, @, tab or CR first: OWASP's CSV
 * injection rule) gets a leading `'`; external ids come from the input file, custom token ids from it too.
 */
const csvCell = (raw: string) => {
  // A value that itself starts with ' gets one too (review r2b): a reader strips exactly one leading ' from a
  // cell that has one, and "=1" and "'=1" (two customers) no longer both come out as '=1.
  const value = /^[=+\-@\t\r']/.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
};

interface TokenAnswer {
  id?: unknown;
  created_at?: unknown;
  /** Set in a replayed answer (a resumed batch) on a token deleted or changed since its first answer. */
  replay?: unknown;
}

/** The request index a field error or a detail names ("3.data.number", "(the token request at 3)"). */
function indexesAtFault(body: unknown, size: number): Map<number, Record<string, string[]>> {
  const faults = new Map<number, Record<string, string[]>>();
  const problem = (typeof body === "object" && body !== null ? body : {}) as {
    errors?: Record<string, string[]>;
    detail?: string;
  };
  for (const [field, messages] of Object.entries(problem.errors ?? {})) {
    const match = /^(\d+)(?:\.(.*))?$/.exec(field);
    if (!match) continue;
    const index = Number(match[1]);
    if (index >= size) continue;
    const fields = faults.get(index) ?? {};
    fields[fromServer(match[2] || "request")] = Array.isArray(messages)
      ? messages.map((m) => fromServer(String(m)))
      : [];
    faults.set(index, fields);
  }
  const named = /\(the token request at (\d+)(?:\.[^)]*)?\)/.exec(problem.detail ?? "");
  if (named && !faults.has(Number(named[1])) && Number(named[1]) < size) faults.set(Number(named[1]), {});
  return faults;
}

/**
 * Statuses that fail a whole batch's lines when no request is named: the request itself was refused (400, 413,
 * 415, 422) or, 409, it cannot be answered (took effect with its answer lost, fingerprints kept changing).
 */
const WHOLE_BATCH_FAILURES = new Set([400, 409, 413, 415, 422]);

/**
 * A token id as the import counts it: 48 bits of its SHA-256, so the set of ids counted holds numbers, not strings
 * (a million take about 20 MB, not 150). Two ids that clash (odds about n² / 2⁴⁹) count one token as deduplicated;
 * the mapping never depends on it.
 */
const countKey = (id: string) => createHash("sha256").update(id).digest().readUIntBE(0, 6);

/** The detail without the batch-local position (the summary names the line instead). */
const detailOf = (answer: { status: number; body: unknown }) =>
  (problemOf({ ...answer, headers: new Headers() }).detail ?? `answered ${answer.status}`).replace(
    / \(the token request at [^)]*\)/,
    "",
  );

export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const { file } = options;
  const batchSize = options.batchSize ?? 100;
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH)
    throw new CliError(`--batch-size must be 1 to ${MAX_BATCH}`);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32)
    throw new CliError("--concurrency must be 1 to 32");
  if (!existsSync(file) || !statSync(file).isFile()) throw new CliError(`no such file: ${file}`);
  const found = formatOf(file);
  if (!found) throw new CliError(`${file}: the file must end in .jsonl, .ndjson or .csv`);
  const format = found;

  const mappingFile = options.mappingFile ?? `${file}.mapping.csv`;
  const stateFile = options.stateFile ?? `${file}.import-state`;
  const summaryFile = options.summaryFile ?? `${file}.summary.json`;
  // A CSV that stops the import (a record that is no CSV) stops it before anything is sent or any state written
  // (review r4b): stopped midway, every batch before the bad record had created its tokens, and the file once
  // fixed has another SHA-256, so its state is refused: resuming meant removing it and creating them all again.
  if (format === "csv") {
    try {
      for await (const _ of readRecords(file, format, options.idColumn)) void _;
    } catch (error) {
      throw error instanceof CliError ? error : new CliError(`${file}: ${unreadable(error)}`);
    }
  }
  const { sha256, lines } = await fingerprint(file);
  const header: StateHeader = {
    version: 1,
    file_sha256: sha256,
    batch_size: batchSize,
    id_column: options.idColumn ?? null,
  };
  const lock = lockRun(`${stateFile}.lock`, `import with the state file ${stateFile}`);
  try {
    return await importLocked();
  } finally {
    lock.release();
  }

  async function importLocked(): Promise<ImportSummary> {
    const state = loadState(stateFile, header);
    const resumedBatches = state.done.size;
    // Cut back to what the state vouches for: lines of a batch not recorded are written again on its resend. A
    // mapping shorter than that (removed, another --mapping) would lose the finished batches' token ids for good
    // (and ftruncate would pad it with NUL bytes): refused, never started afresh.
    if (state.mappingBytes > 0) {
      const size = existsSync(mappingFile) ? statSync(mappingFile).size : -1;
      if (size < state.mappingBytes)
        throw new CliError(
          `${mappingFile} ${size < 0 ? "is missing" : "is shorter than the state file records"}: it holds the token ids of the ${state.done.size} finished batches; pass the mapping file of the first run (--mapping), or remove ${stateFile} to start over (tokens already created would be created again)`,
        );
      truncateOutput(mappingFile, state.mappingBytes);
    } else writeOutput(mappingFile, "line,external_id,token_id\n");
    let mappingBytes = statSync(mappingFile).size;
    // Token ids this import has counted (those of resumed batches included): a token another line or batch of the
    // import already counted, answered again, is a deduplication, not a second creation.
    const counted = new Set<number>();
    let titles = true;
    for await (const line of readOwnLines(mappingFile)) {
      const id = titles ? "" : line.slice(line.lastIndexOf(",") + 1).replace(/^'/, "");
      titles = false;
      if (id) counted.add(countKey(id));
    }

    const total = format === "csv" ? Math.max(0, lines - 1) : lines;
    const previouslyDone = [...state.done.values()].reduce((sum, b) => sum + b.records, 0);
    const progress = new Progress({
      total,
      done: previouslyDone,
      stream: options.progress ?? process.stderr,
      label: "import",
    });
    const api: ApiOptions = {
      url: options.url,
      key: options.key,
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onWait: (ms, reason) => progress.waiting(ms, reason),
    };
    const keyId = state.keySecret
      ? createHmac("sha256", state.keySecret).update(sha256).digest("hex")
      : sha256;
    const keyPrefix = `svc-import-${keyId.slice(0, 40)}-${batchSize}`;

    /** Sends one batch until it succeeds without its bad requests; answers its record (not yet written). */
    const sendBatch = async (batch: number, records: InputRecord[]) => {
      // Lines the service refused in this batch's last send of an earlier run: still left out (the key names them).
      const refusedBefore = state.refused.get(batch) ?? [];
      const failed: Failure[] = [
        ...records.flatMap((r) => (r.problem ? [{ line: r.line, detail: r.problem }] : [])),
        ...refusedBefore,
      ];
      let pending = records.filter((r) => r.request && !refusedBefore.some((f) => f.line === r.line));
      const tokens: { record: InputRecord; id: string }[] = [];
      let deduplicated = 0;
      // A token created since the batch was first sent (by this run or one that died before recording it, whose
      // answer a retry replays) is this import's; one created before, a deduplication.
      const firstSent = state.firstSent.get(batch) ?? Date.now();
      lock.confirm(); // a run whose lock another run took over sends and records nothing more
      if (!state.firstSent.has(batch)) {
        recordSend(stateFile, { batch, sent_at: firstSent });
        state.firstSent.set(batch, firstSent);
      }
      while (pending.length > 0) {
        // The key names the batch and the lines left out of it: a resend of the same set replays its answer.
        const excluded = failed.map((f) => f.line).join(",");
        const suffix = excluded
          ? `-x${createHash("sha256").update(excluded).digest("hex").slice(0, 16)}`
          : "";
        const sentAt = Date.now();
        const answer = await request(
          api,
          "POST",
          "/tokenize",
          pending.map((r) => r.request),
          { "svc-idempotency-key": `${keyPrefix}-${batch}${suffix}` },
        );
        if (answer.status === 201 || answer.status === 200) {
          const answers = Array.isArray(answer.body) ? (answer.body as TokenAnswer[]) : [];
          if (answers.length !== pending.length)
            throw new CliError(
              `batch ${batch}: the service answered ${answers.length} tokens for ${pending.length}`,
            );
          // A new token is created now; a deduplicated one was created before (5 s of clock skew allowed).
          const served = Date.parse(answer.headers.get("date") ?? "") || sentAt;
          // Each answer must be a token: anything else (an answer of another shape) would be mapped as "undefined".
          if (!answers.every((t) => typeof t?.id === "string" && t.id !== ""))
            throw new CliError(
              `batch ${batch}: the service answered something other than a token for a request`,
            );
          for (const [i, record] of pending.entries()) {
            const token = answers[i] as TokenAnswer;
            const id = String(token.id);
            // A replayed batch (a resumed run) whose token was deleted since: the line's token is gone, not mapped.
            if (token.replay === "gone") {
              failed.push({
                line: record.line,
                status: 404,
                detail: `its token ${fromServer(id)} was deleted after this batch was first sent; import the line again to create it anew`,
              });
              continue;
            }
            const createdAt = Date.parse(String(token.created_at));
            if (counted.has(countKey(id)) || createdAt < Math.min(served, sentAt, firstSent) - 5000)
              deduplicated++;
            counted.add(countKey(id));
            tokens.push({ record, id });
          }
          break;
        }
        const faults = indexesAtFault(answer.body, pending.length);
        // A 403 naming a request (a container the key may not create in) is that line's; any other stops the run.
        if (!(answer.status === 403 && faults.size > 0)) stopOn(answer, `batch ${batch}`);
        const detail = detailOf(answer);
        if (faults.size === 0) {
          // Nothing names a request: the whole batch failed as one (e.g. 413). Only answers about the request itself
          // fail its lines; any other (a status this CLI does not know) stops the run with the batch unrecorded, so
          // a rerun resumes it (recorded failed, a replay refused whole lost its stored tokens' mapping: review s51-a).
          if (!WHOLE_BATCH_FAILURES.has(answer.status))
            throw new CliError(
              `batch ${batch}: the service answered ${answer.status}: ${detail}; run again to resume`,
            );
          for (const record of pending) failed.push({ line: record.line, status: answer.status, detail });
          pending = [];
          break;
        }
        for (const [index, errors] of faults) {
          const record = pending[index] as InputRecord;
          failed.push({
            line: record.line,
            status: answer.status,
            detail,
            ...(Object.keys(errors).length > 0 ? { errors } : {}),
          });
        }
        pending = pending.filter((_, index) => !faults.has(index));
        if (pending.length > 0) {
          const refused = failed.filter((f) => f.status !== undefined);
          lock.confirm();
          recordSend(stateFile, { batch, sent_at: firstSent, refused });
          state.refused.set(batch, refused);
        }
      }
      failed.sort((a, b) => a.line - b.line);
      return { tokens, failed, deduplicated };
    };

    /** Writes a finished batch: its mapping lines, then its state line (import-state.ts says why this order). */
    const finish = (batch: number, records: number, outcome: Awaited<ReturnType<typeof sendBatch>>) => {
      lock.confirm(); // the other run records this batch (the service replays its answer to it)
      const text = outcome.tokens
        .map(({ record, id }) => `${record.line},${csvCell(record.externalId ?? "")},${csvCell(id)}\n`)
        .join("");
      if (text) {
        appendOutput(mappingFile, text);
        mappingBytes += Buffer.byteLength(text);
      }
      const entry: BatchRecord = {
        batch,
        records,
        created: outcome.tokens.length - outcome.deduplicated,
        deduplicated: outcome.deduplicated,
        failed: outcome.failed,
        mapping_bytes: mappingBytes,
      };
      recordBatch(stateFile, entry);
      state.done.set(batch, entry);
      progress.advance(records);
      options.onBatch?.(batch);
    };

    // Bounded concurrency: the reader waits while `concurrency` batches are in flight (memory flat in the size).
    const inFlight = new Set<Promise<void>>();
    let stopped: unknown;
    const launch = (batch: number, records: InputRecord[]) => {
      const task = sendBatch(batch, records)
        // Recorded even once the run has stopped: the service created it, and a rerun under a changed grant (the
        // fix a 403 asks for) would not replay it but create it again (search and bulk review).
        .then((outcome) => finish(batch, records.length, outcome))
        .catch((error: unknown) => {
          stopped ??= error;
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    };
    let batch = 0;
    let current: InputRecord[] = [];
    const flush = async () => {
      const records = current;
      current = [];
      const number = batch++;
      if (state.done.has(number)) return;
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      if (stopped !== undefined) return;
      launch(number, records);
    };
    try {
      for await (const record of readRecords(file, format, options.idColumn)) {
        if (stopped !== undefined) break;
        current.push(record);
        if (current.length === batchSize) await flush();
      }
      if (current.length > 0 && stopped === undefined) await flush();
    } catch (error) {
      stopped ??= error instanceof CliError ? error : new CliError(`${file}: ${unreadable(error)}`);
    }
    await Promise.all(inFlight);
    progress.finish();
    if (stopped !== undefined) throw stopped;

    const batches = [...state.done.values()];
    const summary: ImportSummary = {
      file,
      records: batches.reduce((sum, b) => sum + b.records, 0),
      created: batches.reduce((sum, b) => sum + b.created, 0),
      deduplicated: batches.reduce((sum, b) => sum + b.deduplicated, 0),
      failed: batches.flatMap((b) => b.failed).sort((a, b) => a.line - b.line),
      mapping_file: mappingFile,
      state_file: stateFile,
      summary_file: summaryFile,
      resumed_batches: resumedBatches,
    };
    writeOutput(summaryFile, `${JSON.stringify(summary, null, 2)}\n`);
    return summary;
  }
}

/**
 * What stopped the input's reading, never its message: csv-parse puts the field's value in its own (a card
 * number in `Invalid Opening Quote: ... value is "4000..."`, printed to the terminal; review of 27 Nov 2026).
 */
function unreadable(error: unknown): string {
  const { code, lines } = (error ?? {}) as { code?: unknown; lines?: unknown };
  const what = typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? ` (${code})` : "";
  // csv-parse's errors say the line (and hold the field: `raw`, `field`, never shown).
  if (typeof lines === "number") return `line ${lines}: not valid CSV${what}`;
  return `cannot be read${what}`;
}
