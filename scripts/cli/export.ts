/**
 * `svc-vault export`: every token the key may read, as GET /v2/tokens presents them (the key's token:read
 * rules), one JSON object per line, page by page through the cursor. Memory flat in the tenant's size.
 */

import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { type ApiOptions, CliError, request, stopOn } from "./api.ts";
import { openOutput } from "./output-files.ts";
import { Progress, type ProgressStream } from "./progress.ts";

export interface ExportOptions extends Pick<ApiOptions, "url" | "key" | "sleep" | "signal"> {
  /** Absent: stdout. */
  out?: string;
  pageSize?: number;
  progress?: ProgressStream;
}

interface CursorPage {
  pagination?: { next?: string };
  data?: unknown[];
}

async function write(stream: NodeJS.WritableStream, text: string) {
  if (!stream.write(text)) await once(stream, "drain");
}

export async function runExport(options: ExportOptions): Promise<{ tokens: number }> {
  const pageSize = options.pageSize ?? 100;
  const api: ApiOptions = {
    url: options.url,
    key: options.key,
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const file: WriteStream | undefined = options.out
    ? createWriteStream(options.out, { fd: openOutput(options.out, "truncate") })
    : undefined;
  const out: NodeJS.WritableStream = file ?? process.stdout;
  // The total is unknown (a cursor listing has none): the bar shows the count and the rate.
  const progress = new Progress({ done: 0, stream: options.progress ?? process.stderr, label: "export" });
  let tokens = 0;
  let start: string | undefined;
  // Cursors already followed (their digests: a few bytes per page of 100): a server that answers one again would
  // loop the export for ever, repeating its lines.
  const followed = new Set<string>();
  try {
    do {
      const query = new URLSearchParams({ size: String(pageSize), ...(start ? { start } : {}) });
      const answer = await request(api, "GET", `/v2/tokens?${query}`);
      if (answer.status !== 200) {
        stopOn(answer, "GET /v2/tokens");
        throw new CliError(`GET /v2/tokens answered ${answer.status}`);
      }
      const page = answer.body as CursorPage;
      for (const token of page.data ?? []) await write(out, `${JSON.stringify(token)}\n`);
      tokens += page.data?.length ?? 0;
      progress.advance(page.data?.length ?? 0);
      start = page.pagination?.next;
      if (start !== undefined) {
        const digest = typeof start === "string" ? createHash("sha256").update(start).digest("base64") : "";
        if (!digest || followed.has(digest))
          throw new CliError(
            `GET /v2/tokens answered a next page it had already answered (after ${tokens} tokens): the listing would never end`,
          );
        followed.add(digest);
      }
    } while (start);
  } finally {
    progress.finish();
    if (file) {
      file.end();
      await once(file, "close");
    }
  }
  return { tokens };
}
