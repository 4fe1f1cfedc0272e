/**
 * The import's input, read as a stream (memory flat in the file's size): JSONL (one token request per line)
 * or CSV (a header row naming the fields). Each record carries its line number; a line that is not a token
 * request becomes a problem for the summary, never an exception, and its content is never repeated.
 */
import { createReadStream } from "node:fs";
import { parse as parseCsv } from "csv-parse/sync";
import { CliError } from "./api.ts";

export interface InputRecord {
  /** 1-based line number in the file (a CSV record spanning lines: its last line). */
  line: number;
  /** The --id-column's value, when one was named and given. */
  externalId?: string;
  /** The token request to send; absent when the line is unusable (then `problem` says why). */
  request?: Record<string, unknown>;
  problem?: string;
}

export type InputFormat = "jsonl" | "csv";

export function formatOf(file: string): InputFormat | undefined {
  const lower = file.toLowerCase();
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) return "jsonl";
  if (lower.endsWith(".csv")) return "csv";
  return undefined;
}

export function readRecords(
  file: string,
  format: InputFormat,
  idColumn?: string,
): AsyncIterable<InputRecord> {
  return format === "jsonl" ? readJsonl(file, idColumn) : readCsv(file, idColumn);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The external id of a record (removed from the request: the service would refuse an unknown field). */
function takeId(request: Record<string, unknown>, idColumn: string | undefined): string | undefined {
  if (!idColumn || !(idColumn in request)) return undefined;
  const value = request[idColumn];
  delete request[idColumn];
  return value === undefined || value === null || value === "" ? undefined : String(value);
}

/**
 * The record of a line, once its external id is taken out. Every reader ends here: POST /tokenize takes any
 * object that lacks a string `type` or a `data` for a container of token requests and tokenizes each of its
 * values as a generic token (a card number of a line whose `type` is missing or misspelt went to /general/,
 * answered as an object without an id), so such a line is a problem, never sent.
 */
function recordOf(line: number, request: Record<string, unknown>, idColumn: string | undefined): InputRecord {
  const externalId = takeId(request, idColumn);
  const id = externalId === undefined ? {} : { externalId };
  if (typeof request.type !== "string" || request.type === "" || !("data" in request))
    return { line, problem: "not a token request (a `type` and a `data` are required)", ...id };
  return { line, request, ...id };
}

/**
 * The longest line or CSV record read: the service's default body limit (SVC_MAX_BODY_BYTES, 1 MiB), which no
 * single request above it can pass. Longer lines are skipped as they stream by (reported, never held in memory:
 * readline and csv-parse keep a line of any length whole, so one 2 GB line without a newline took the CLI down).
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Where a CSV record stands after some of its bytes, as csv-parse reads them: at a field's start, in an unquoted
 * field, in a quoted one, just after a quote inside a quoted one (its end, or the first of `""`), after a quoted
 * field's closing quote.
 */
const Csv = { FieldStart: 0, Unquoted: 1, Quoted: 2, QuoteInQuoted: 3, Closed: 4 } as const;
type CsvState = (typeof Csv)[keyof typeof Csv];

/**
 * The file's lines (split on LF, a CR before it dropped), each as text or as `undefined` when too long, with the
 * number of its last line. `csv`: a LF inside a quoted field does not end it, so a CSV record is one piece however
 * many lines it spans, and bounded as a line is (review r2b: csv-parse threw CSV_MAX_RECORD_SIZE on a long record
 * and the whole import stopped there, at every resume). Quotes are followed as csv-parse follows them (a quote
 * opens a field only at its start; `""` inside one is a quote), not counted: a stray quote in an unquoted field
 * (`5" screen`) and a CR that ends no line (a file saved with CR line endings, a lone CR between two records) make
 * the record `invalid`, whatever its length (review r3b: counted, a stray quote swallowed the rest of the file
 * into one record over 1 MiB, reported as one failed line and the import went on without those records; a CR
 * record separator left every record after it out of the parse, in silence).
 */
async function* boundedLines(
  file: string,
  csv = false,
): AsyncIterable<{ text: string | undefined; line: number; first: number; invalid?: string }> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  /** The line the record being read began on. */
  let first = 1;
  let unended = false;
  let state: CsvState = Csv.FieldStart as CsvState;
  let afterCr = false;
  let invalid: string | undefined;
  const add = (piece: Buffer) => {
    if (!tooLong && size + piece.length > MAX_LINE_BYTES) {
      tooLong = true;
      parts = [];
      size = 0;
    }
    if (!tooLong && piece.length > 0) {
      parts.push(Buffer.from(piece));
      size += piece.length;
    }
  };
  /** Follows the record's quoting through `piece` (no LF in it, but inside a quoted field). */
  let atStart = true;
  const follow = (piece: Buffer) => {
    if (!csv || invalid) return;
    // A byte order mark before the header is no field's (readCsv drops it).
    const bom = atStart && piece[0] === 0xef && piece[1] === 0xbb && piece[2] === 0xbf ? 3 : 0;
    atStart = false;
    for (const byte of piece.subarray(bom)) {
      if (afterCr && state !== Csv.Quoted) {
        invalid = "CSV_CR_NOT_LINE_END";
        return;
      }
      afterCr = false;
      switch (state) {
        case Csv.FieldStart:
        case Csv.Unquoted:
          if (byte === 34) {
            if (state === Csv.Unquoted) invalid = "CSV_INVALID_OPENING_QUOTE";
            state = Csv.Quoted;
          } else if (byte === 44) state = Csv.FieldStart;
          else if (byte === 13) afterCr = true;
          else state = Csv.Unquoted;
          break;
        case Csv.Quoted:
          if (byte === 34) state = Csv.QuoteInQuoted;
          break;
        case Csv.QuoteInQuoted:
          if (byte === 34) state = Csv.Quoted;
          else if (byte === 44) state = Csv.FieldStart;
          else if (byte === 13) {
            state = Csv.Closed;
            afterCr = true;
          } else invalid = "CSV_INVALID_CLOSING_QUOTE";
          break;
        case Csv.Closed:
          if (byte === 44) state = Csv.FieldStart;
          else if (byte === 13) afterCr = true;
          else invalid = "CSV_INVALID_CLOSING_QUOTE";
          break;
      }
      if (invalid) return;
    }
  };
  const take = (): string | undefined => {
    const text = tooLong ? undefined : Buffer.concat(parts, size).toString("utf8").replace(/\r$/, "");
    parts = [];
    size = 0;
    tooLong = false;
    state = Csv.FieldStart;
    afterCr = false;
    return text;
  };
  const ended = () => {
    const found = invalid;
    invalid = undefined;
    return found === undefined ? {} : { invalid: found };
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let at = chunk.indexOf(10, from); at !== -1; at = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, at);
      follow(piece);
      line++;
      from = at + 1;
      if (csv && !invalid && (state as CsvState) === Csv.Quoted) {
        add(chunk.subarray(at - piece.length, at + 1)); // inside a quoted field: the LF is the field's
        continue;
      }
      add(piece);
      const text = take();
      yield { text, line, first, ...ended() };
      first = line + 1;
    }
    const rest = chunk.subarray(from);
    follow(rest);
    add(rest);
    // A last line without a newline (the rest of the final chunk) counts as a line of its own.
    unended = rest.length > 0;
  }
  if (csv && !invalid && (state as CsvState) === Csv.Quoted) invalid = "CSV_QUOTE_NOT_CLOSED";
  if (size > 0 || tooLong) {
    const text = take();
    yield { text, line: unended ? line + 1 : line, first, ...ended() };
  }
}

async function* readJsonl(file: string, idColumn?: string): AsyncIterable<InputRecord> {
  for await (const { text, line } of boundedLines(file)) {
    if (text === undefined) {
      yield {
        line,
        problem: `longer than ${MAX_LINE_BYTES} bytes (the service's request limit): never sent`,
      };
      continue;
    }
    if (text.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, problem: "not valid JSON" };
      continue;
    }
    if (!isObject(value)) {
      yield { line, problem: "not a JSON object (a token request)" };
      continue;
    }
    yield recordOf(line, value, idColumn);
  }
}

/** CSV values are text; these card fields are numbers in a token request. */
const NUMERIC_DATA_FIELDS = new Set(["expiration_month", "expiration_year"]);

/**
 * A CSV row as a token request: `type`, `data` (text) or `data.<field>` columns (an object), `metadata.<key>`,
 * `containers` and `search_indexes` (separated by `;`), `deduplicate_token` (true/false), `id`, `expires_at`,
 * `fingerprint_expression`, `mask`; a column named `<field>:json` holds JSON. Empty cells are left out.
 */
export function requestOfRow(header: string[], row: string[]): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  const data: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const [i, column] of header.entries()) {
    const cell = row[i] ?? "";
    if (cell === "") continue;
    if (column.endsWith(":json")) {
      request[column.slice(0, -5)] = JSON.parse(cell);
    } else if (column.startsWith("data.")) {
      const field = column.slice(5);
      data[field] = NUMERIC_DATA_FIELDS.has(field) && /^\d+$/.test(cell) ? Number(cell) : cell;
    } else if (column.startsWith("metadata.")) {
      metadata[column.slice(9)] = cell;
    } else if (column === "containers" || column === "search_indexes") {
      request[column] = cell
        .split(";")
        .map((part) => part.trim())
        .filter(Boolean);
    } else if (column === "deduplicate_token") {
      request[column] = cell.toLowerCase() === "true";
    } else {
      request[column] = cell;
    }
  }
  if (Object.keys(data).length > 0) request.data = data;
  if (Object.keys(metadata).length > 0) request.metadata = metadata;
  return request;
}

async function* readCsv(file: string, idColumn?: string): AsyncIterable<InputRecord> {
  // Record by record, each bounded as it streams (boundedLines): a record over MAX_LINE_BYTES is a failed line,
  // the rest of the file read on. Rows as arrays with relaxed counts: a row of the wrong width is a bad line.
  let header: string[] | undefined;
  let first = true;
  for await (const { text, line, first: begins, invalid } of boundedLines(file, true)) {
    const raw = first && text !== undefined ? text.replace(/^\uFEFF/, "") : text;
    first = false;
    // No CSV, however long: where the records after it begin and end is not known (a stray quote read on swallowed
    // the rest of the file into one record), so the import stops there.
    if (invalid) throw Object.assign(new Error("not valid CSV"), { code: invalid, lines: begins });
    if (raw === undefined) {
      if (!header) throw new CliError(`${file}: the CSV header is longer than ${MAX_LINE_BYTES} bytes`);
      yield {
        line,
        problem: `longer than ${MAX_LINE_BYTES} bytes (the service's request limit): never sent`,
      };
      continue;
    }
    if (raw.trim() === "") continue;
    let record: string[];
    try {
      const records = parseCsv(raw, { relax_column_count: true }) as string[][];
      // One record per piece: a second is one boundedLines did not see end (the rest would be left out in silence).
      if (records.length > 1)
        throw Object.assign(new Error("more than one record"), { code: "CSV_RECORD_SPLIT" });
      record = records[0] ?? [];
    } catch (error) {
      // No CSV (a stray quote): where records begin and end is not known past it, so the import stops there, said
      // by the record's first line and the parser's code (import.ts unreadable), never its content.
      throw Object.assign(new Error("not valid CSV"), {
        code: (error as { code?: unknown }).code,
        lines: begins,
      });
    }
    if (!header) {
      header = record.map((column) => column.trim());
      if (!header.includes("type")) throw new CliError(`${file}: the CSV header has no \`type\` column`);
      continue;
    }
    if (record.length !== header.length) {
      yield { line, problem: `has ${record.length} columns, the header ${header.length}` };
      continue;
    }
    let request: Record<string, unknown>;
    try {
      request = requestOfRow(header, record);
    } catch {
      yield { line, problem: "a :json column does not hold valid JSON" };
      continue;
    }
    yield recordOf(line, request, idColumn);
  }
}
