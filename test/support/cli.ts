import { readFileSync } from "node:fs";
import { vi } from "vitest";
import { main } from "../../scripts/cli/main.ts";

/**
 * Runs `svc-vault <argv>` in process with SVC_API_KEY set, stdout and stderr captured (in order, as one text);
 * `tty`: stdout as a terminal. Answers the exit code and what was printed.
 */
export async function runCli(argv: string[], options: { tty?: boolean } = {}) {
  const printed: string[] = [];
  const tty = Object.getOwnPropertyDescriptor(process.stdout, "isTTY");
  if (options.tty) Object.defineProperty(process.stdout, "isTTY", { value: true, configurable: true });
  const capture = (chunk: unknown) => {
    printed.push(String(chunk));
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(capture);
  const err = vi.spyOn(process.stderr, "write").mockImplementation(capture);
  process.env.SVC_API_KEY = "key_test";
  try {
    const code = await main(argv);
    return { code, printed: printed.join("") };
  } finally {
    delete process.env.SVC_API_KEY;
    out.mockRestore();
    err.mockRestore();
    if (options.tty) {
      if (tty) Object.defineProperty(process.stdout, "isTTY", tty);
      else delete (process.stdout as { isTTY?: boolean }).isTTY;
    }
  }
}

/** The token ids an import's mapping file names, in its order (its title row left out). */
export const mappedTokenIds = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((row) => row.split(",")[2] ?? "");
