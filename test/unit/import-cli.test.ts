import { describe, expect, it, vi } from "vitest";
import { request, retryAfterMs } from "../../scripts/cli/api.ts";
import { duration, Progress } from "../../scripts/cli/progress.ts";
import { requestOfRow } from "../../scripts/cli/records.ts";

describe("svc-vault import's pure rules", () => {
  it("reads a CSV row as a token request: data.<field>, metadata.<key>, lists and :json columns", () => {
    const header = [
      "type",
      "data.number",
      "data.expiration_month",
      "metadata.tier",
      "containers",
      "mask:json",
      "note",
    ];
    expect(
      requestOfRow(header, ["card", "4242424242424242", "07", "gold", "/pci/; /eu/", '"****"', ""]),
    ).toEqual({
      type: "card",
      data: { number: "4242424242424242", expiration_month: 7 },
      metadata: { tier: "gold" },
      containers: ["/pci/", "/eu/"],
      mask: "****",
    });
  });

  it("honours Retry-After as seconds or a date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it("waits out a request still being processed for minutes, not ten 1 s retries (a batch holds a value up to 60 s)", async () => {
    const busy = { title: "Conflict", status: 409, detail: "A batch … is still being processed." };
    const answer = () => new Response(JSON.stringify(busy), { status: 409, headers: { "retry-after": "1" } });
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => answer()),
    );
    const waits: number[] = [];
    try {
      const sleep = async (ms: number) => {
        waits.push(ms);
      };
      const answered = await request(
        { url: "http://vault.invalid", key: "k", sleep },
        "POST",
        "/tokenize",
        [],
      );
      expect(answered.status).toBe(409); // after the last attempt, the caller decides
    } finally {
      vi.unstubAllGlobals();
    }
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(60_000);
  });

  it("shows records/s and the ETA, on a TTY as a bar, elsewhere as a plain line", () => {
    let now = 0;
    const written: string[] = [];
    const tty = new Progress({
      total: 1000,
      done: 0,
      stream: { write: (t: string) => written.push(t), isTTY: true, columns: 100 },
      label: "import",
      now: () => now,
    });
    now = 2000;
    tty.advance(250);
    expect(tty.line()).toMatch(/^import \[█+░+\] 25% 250\/1,000 125 rec\/s ETA 0:06$/);
    expect(written.at(-1)).toContain("\r");
    const plain = new Progress({
      total: 10,
      done: 5,
      stream: { write: () => true },
      label: "import",
      now: () => now,
    });
    expect(plain.line()).toBe("import: 50% 5/10 0 rec/s ETA --:--");
    expect(duration(3725)).toBe("1:02:05");
  });
});
