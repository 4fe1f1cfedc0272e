/**
 * The import's state file: what a rerun needs to resume. JSON lines, appended: a header naming the input (its
 * SHA-256 and the batch size, which fix the batches and their idempotency keys), a line when a batch is first
 * sent (the summary's line between created and deduplicated), and one line per finished batch with its counts and the mapping file's length once its lines were written. A rerun skips the finished
 * batches and cuts the mapping file back to the last recorded length, so a kill between the two writes leaves
 * no half-recorded batch: that batch is sent again with the same idempotency key and answers the same tokens.
 */
import { randomBytes } from "node:crypto";
import { CliError } from "./api.ts";
import { appendOutput, readOwnFile, writeOutput } from "./output-files.ts";

export interface StateHeader {
  version: 1;
  file_sha256: string;
  batch_size: number;
  id_column: string | null;
  /**
   * A random secret of this import, made on its first run: the idempotency keys are an HMAC of the file's hash
   * under it. The service kept idempotency keys as given until 27 Nov 2026 (24 h, and in backups; a keyed digest
   * since), and any proxy or log on the way may: the file's bare hash would let whoever reads them confirm guesses
   * of a small file's cards. Absent in state files written before it existed, whose keys are resumed as they were.
   */
  key_secret?: string;
}

export interface Failure {
  line: number;
  status?: number;
  detail: string;
  errors?: Record<string, string[]>;
}

export interface BatchRecord {
  batch: number;
  created: number;
  deduplicated: number;
  failed: Failure[];
  records: number;
  mapping_bytes: number;
}

/**
 * Written before a batch's first send: tokens created since are this import's, even when a rerun replays them.
 * Written again before each resend without lines the service refused (`refused`): the resend's idempotency key
 * names them, so a rerun resumes with that key, not the first one, whose attempt stored nothing and would store
 * the whole batch again (search and bulk review).
 */
export interface BatchSend {
  batch: number;
  sent_at: number;
  refused?: Failure[];
}

export interface LoadedState {
  done: Map<number, BatchRecord>;
  /** When each batch was first sent (epoch ms), finished or not. */
  firstSent: Map<number, number>;
  /** The lines the service refused in an unfinished batch's last send (BatchSend.refused). */
  refused: Map<number, Failure[]>;
  mappingBytes: number;
  /** The import's secret (undefined: a state file from before secrets, resumed with its old keys). */
  keySecret: string | undefined;
}

export function loadState(path: string, header: StateHeader): LoadedState {
  const done = new Map<number, BatchRecord>();
  // Read under the rule the writes follow (output-files.ts): a planted state file is refused, never trusted.
  const text = readOwnFile(path);
  if (text === undefined) {
    const keySecret = randomBytes(32).toString("hex");
    writeOutput(path, `${JSON.stringify({ ...header, key_secret: keySecret })}\n`);
    return { done, firstSent: new Map(), refused: new Map(), mappingBytes: 0, keySecret };
  }
  const lines = text.split("\n");
  const first = lines.shift();
  let stored: StateHeader | undefined;
  try {
    stored = first ? (JSON.parse(first) as StateHeader) : undefined;
  } catch {
    stored = undefined;
  }
  if (
    !stored ||
    stored.file_sha256 !== header.file_sha256 ||
    stored.batch_size !== header.batch_size ||
    stored.id_column !== header.id_column
  )
    throw new CliError(
      `the state file ${path} belongs to another input, batch size or id column; remove it to start over (tokens already created would be created again) or pass the same options`,
    );
  let mappingBytes = 0;
  const firstSent = new Map<number, number>();
  const refused = new Map<number, Failure[]>();
  for (const text of lines) {
    if (text.trim() === "") continue;
    let record: BatchRecord | BatchSend;
    try {
      record = JSON.parse(text) as BatchRecord | BatchSend;
    } catch {
      continue; // a line cut short by a kill: that batch is sent again
    }
    if ("sent_at" in record) {
      firstSent.set(record.batch, Math.min(record.sent_at, firstSent.get(record.batch) ?? Infinity));
      if (record.refused) refused.set(record.batch, record.refused);
      continue;
    }
    done.set(record.batch, record);
    mappingBytes = Math.max(mappingBytes, record.mapping_bytes);
  }
  return { done, firstSent, refused, mappingBytes, keySecret: stored.key_secret };
}

export function recordSend(path: string, send: BatchSend): void {
  appendOutput(path, `${JSON.stringify(send)}\n`);
}

export function recordBatch(path: string, record: BatchRecord): void {
  appendOutput(path, `${JSON.stringify(record)}\n`);
}
