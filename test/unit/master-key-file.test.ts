import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keyCheckValue } from "#shared/adapters/local/master-key-check.ts";
import { defaultMasterKeyFile, locateMasterKeyFile } from "#shared/adapters/local/master-key-file.ts";

let configHome: string;
let saved: string | undefined;
beforeEach(() => {
  saved = process.env.XDG_CONFIG_HOME;
  configHome = mkdtempSync(join(tmpdir(), "svc-mk-unit-config-"));
  process.env.XDG_CONFIG_HOME = configHome;
});
afterEach(() => {
  if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = saved;
});

const key = (byte: number) => `${Buffer.alloc(32, byte).toString("base64")}\n`;

describe("where the local master key lives", () => {
  it("defaults to the user's configuration directory, one file per data directory, never inside it", () => {
    const a = mkdtempSync(join(tmpdir(), "svc-mk-a-"));
    const b = mkdtempSync(join(tmpdir(), "svc-mk-b-"));

    const fileA = defaultMasterKeyFile(a);

    expect(fileA.startsWith(join(configHome, "svc-vault"))).toBe(true);
    expect(fileA.startsWith(a)).toBe(false);
    expect(defaultMasterKeyFile(b)).not.toBe(fileA);
    expect(locateMasterKeyFile(a, undefined)).toEqual({ file: fileA });
  });

  it("moves a key from inside the data directory out, keeping its bytes and mode 600", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-mk-legacy-"));
    writeFileSync(join(dataDir, "master.key"), key(1), { mode: 0o600 });

    const { file, notice } = locateMasterKeyFile(dataDir, undefined);

    expect(readFileSync(file, "utf8")).toBe(key(1));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(() => statSync(join(dataDir, "master.key"))).toThrow();
    expect(notice).toContain("Moved the master key");
  });

  it("refuses to choose between two different keys, naming both files", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-mk-two-"));
    const legacy = join(dataDir, "master.key");
    writeFileSync(legacy, key(1), { mode: 0o600 });
    const moved = locateMasterKeyFile(dataDir, undefined).file;
    writeFileSync(legacy, key(2), { mode: 0o600 });

    expect(() => locateMasterKeyFile(dataDir, undefined)).toThrow(legacy);
    expect(() => locateMasterKeyFile(dataDir, undefined)).toThrow(moved);
  });

  it("takes SVC_MASTER_KEY_FILE as given, warning when it sits inside the data directory", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-mk-explicit-"));

    expect(locateMasterKeyFile(dataDir, "/etc/elsewhere.key")).toEqual({ file: "/etc/elsewhere.key" });
    expect(locateMasterKeyFile(dataDir, join(dataDir, "k")).notice).toContain("inside the data directory");
  });

  it("checks a key by a value that tells keys apart and holds none of the key", () => {
    const one = Buffer.alloc(32, 1);

    expect(keyCheckValue(one)).toBe(keyCheckValue(Buffer.alloc(32, 1)));
    expect(keyCheckValue(one)).not.toBe(keyCheckValue(Buffer.alloc(32, 2)));
    expect(keyCheckValue(one)).not.toContain(one.toString("hex").slice(0, 8));
  });
});
