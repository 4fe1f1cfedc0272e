/**
 * `npx svc-vault <command>`: the vault's command line (docs/import.md). Parses arguments, runs the command,
 * prints its summary, and maps failures to exit codes: 0 done, 1 done with failed lines, 2 bad usage or a
 * failure that stopped the run (the state file lets a rerun resume).
 */
import { parseArgs } from "node:util";
import { CliError } from "./api.ts";
import { runExport } from "./export.ts";
import { runImport } from "./import.ts";

const USAGE = `usage:
  svc-vault import <file.jsonl|file.csv> [--url <url>] [--batch-size 100] [--concurrency 4]
                   [--id-column <name>] [--mapping <file>] [--state <file>] [--summary <file>]
  svc-vault export [--url <url>] [--out <file.jsonl>]   (to a terminal only with --out -)

  The key is read from $SVC_API_KEY: --key <key> works too, but every local user can read a command line
  (ps, /proc) for as long as the run lasts. --url defaults to $SVC_URL, else http://127.0.0.1:3000; plain
  http only to this machine unless --allow-plain-http. The import writes <file>.mapping.csv, <file>.import-state and <file>.summary.json
  beside the file unless told otherwise; run it again after an interruption to resume.`;

const OPTIONS = {
  key: { type: "string" },
  url: { type: "string" },
  "batch-size": { type: "string" },
  concurrency: { type: "string" },
  "id-column": { type: "string" },
  mapping: { type: "string" },
  state: { type: "string" },
  summary: { type: "string" },
  out: { type: "string" },
  "allow-plain-http": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

class UsageError extends Error {}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`svc-vault: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return values.help || command === "help" ? 0 : 2;
  }
  try {
    const key = values.key ?? process.env.SVC_API_KEY;
    if (!key)
      throw new UsageError(
        "--key is required: set SVC_API_KEY (a --key on the command line is readable by every local user)",
      );
    if (values.key !== undefined)
      process.stderr.write(
        "svc-vault: warning: --key puts the key on the command line, which every local user can read (ps, /proc) while this runs: set SVC_API_KEY instead\n",
      );
    const url = (values.url ?? process.env.SVC_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
    const parsed = /^https?:\/\/[^/]/.test(url) && URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed) throw new UsageError("--url must be an http(s) URL");
    if (parsed.username || parsed.password)
      throw new UsageError("--url must not hold credentials (the key goes in SVC_API_KEY)");
    // The key travels in a header: over plain HTTP only to this machine (the URL's own host, parsed).
    if (parsed.protocol === "http:" && !["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname)) {
      if (!values["allow-plain-http"])
        throw new UsageError(
          `${parsed.hostname} over plain http: the key and the data would cross the network unencrypted; use https (or --allow-plain-http)`,
        );
      process.stderr.write(
        `svc-vault: warning: ${parsed.hostname} over plain http: the key and the data cross the network unencrypted\n`,
      );
    }
    if (command === "import") {
      const [file, ...extra] = rest;
      if (!file) throw new UsageError("import needs a file: svc-vault import <file.jsonl|file.csv>");
      if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`);
      const summary = await runImport({
        file,
        url,
        key,
        ...optional("batchSize", integer("batch-size", values["batch-size"])),
        ...optional("concurrency", integer("concurrency", values.concurrency)),
        ...optional("idColumn", values["id-column"]),
        ...optional("mappingFile", values.mapping),
        ...optional("stateFile", values.state),
        ...optional("summaryFile", values.summary),
      });
      const shown = summary.failed.slice(0, 20);
      process.stdout.write(
        `${[
          `imported ${summary.file}: ${summary.records} records, ${summary.created} created, ${summary.deduplicated} deduplicated, ${summary.failed.length} failed${summary.resumed_batches ? ` (resumed after ${summary.resumed_batches} batches)` : ""}`,
          ...shown.map(
            (f) =>
              `  line ${f.line}: ${f.status === undefined ? "" : `${f.status} `}${f.detail}${f.errors ? ` ${JSON.stringify(f.errors)}` : ""}`,
          ),
          ...(summary.failed.length > shown.length
            ? [`  … ${summary.failed.length - shown.length} more`]
            : []),
          `mapping: ${summary.mapping_file}`,
          `summary: ${summary.summary_file}`,
        ].join("\n")}\n`,
      );
      return summary.failed.length > 0 ? 1 : 0;
    }
    if (command === "export") {
      if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`);
      // Revealed data on a terminal stays in its scrollback (and any session log): written there only when asked.
      const toStdout = values.out === undefined || values.out === "-";
      if (values.out === undefined && process.stdout.isTTY)
        throw new UsageError(
          "export writes the tokens as the key reads them (revealed data included): pass --out <file>, pipe it, or --out - to print it here",
        );
      const { tokens } = await runExport({ url, key, ...(toStdout ? {} : { out: values.out }) });
      process.stderr.write(`exported ${tokens} tokens${toStdout ? "" : ` to ${values.out}`}\n`);
      return 0;
    }
    throw new UsageError(`unknown command: ${command}`);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc-vault: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof CliError) {
      process.stderr.write(`svc-vault: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** `{ [name]: value }` when the value is given (exactOptionalPropertyTypes: no explicit undefined). */
function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      // An error this CLI did not write may quote its input (token data): its kind only.
      process.stderr.write(`svc-vault: failed (${(error as Error)?.name ?? "error"})\n`);
      process.exitCode = 2;
    },
  );
}
