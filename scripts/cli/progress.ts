/**
 * Progress on stderr: on a TTY a bar redrawn in place (records/s, ETA); otherwise a plain line now and then,
 * so logs of a long import stay readable.
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** Absent: unknown (an export's cursor has no total): the count and the rate only. */
  total?: number;
  /** Records already done before this run (a resumed import): counted, but not in the rate. */
  done: number;
  stream: ProgressStream;
  label: string;
  /** Milliseconds between plain lines when not on a TTY. */
  plainEveryMs?: number;
  now?: () => number;
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "--:--";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

export class Progress {
  private readonly started: number;
  private readonly startDone: number;
  private done: number;
  private lastDraw = 0;
  private note = "";
  private readonly now: () => number;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.done = options.done;
    this.startDone = options.done;
  }

  advance(records: number): void {
    this.done += records;
    this.note = "";
    this.draw(false);
  }

  /** A wait (429 Retry-After, 503): shown until the next batch completes. */
  waiting(ms: number, reason: string): void {
    this.note = ` (waiting ${Math.ceil(ms / 1000)} s: ${reason})`;
    this.draw(true);
  }

  finish(): void {
    this.draw(true);
    if (this.options.stream.isTTY) this.options.stream.write("\n");
  }

  /** The current line: done/total, percent, records/s, ETA. */
  line(): string {
    const { total, label } = this.options;
    const elapsed = (this.now() - this.started) / 1000;
    const rate = elapsed > 0 ? (this.done - this.startDone) / elapsed : 0;
    if (total === undefined)
      return `${label}: ${this.done.toLocaleString("en")} records ${Math.round(rate).toLocaleString("en")} rec/s${this.note}`;
    const left = total - this.done;
    const eta = rate > 0 ? left / rate : Number.POSITIVE_INFINITY;
    const percent = total > 0 ? Math.floor((this.done / total) * 100) : 100;
    const figures = `${percent}% ${this.done.toLocaleString("en")}/${total.toLocaleString("en")} ${Math.round(rate).toLocaleString("en")} rec/s ETA ${left <= 0 ? "0:00" : duration(eta)}${this.note}`;
    if (!this.options.stream.isTTY) return `${label}: ${figures}`;
    const width = Math.max(
      10,
      Math.min(40, (this.options.stream.columns ?? 80) - figures.length - label.length - 6),
    );
    const filled = total > 0 ? Math.round((this.done / total) * width) : width;
    return `${label} [${"█".repeat(filled)}${"░".repeat(Math.max(0, width - filled))}] ${figures}`;
  }

  private draw(force: boolean): void {
    const now = this.now();
    const { stream } = this.options;
    if (stream.isTTY) {
      if (!force && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      stream.write(`\r\x1b[2K${this.line()}`);
      return;
    }
    if (!force && now - this.lastDraw < (this.options.plainEveryMs ?? 5000)) return;
    this.lastDraw = now;
    stream.write(`${this.line()}\n`);
  }
}
