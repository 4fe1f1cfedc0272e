/**
 * Attack: a reactor formula answers at once but leaves work behind in its sandbox process, through the
 * callbacks the allowed modules take (crypto, util) or thread-pool jobs, burning CPU after its run "ended".
 * The host's watchdog reads the process's CPU time from /proc and kills a process that uses CPU while idle;
 * the next run (the attacker's, or another tenant's) gets a fresh process.
 */
import { describe, expect, it } from "vitest";
import { client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { pidOf, processExists, react, reactorTenant, sleep } from "./sandbox-tenant.ts";

const svc = useService();

/** Each answers at once, leaving a never-ending chain of CPU work behind. */
const LINGERING: Record<string, string> = {
  "crypto.randomBytes callbacks": `module.exports = async function () {
    const crypto = require("crypto");
    const burn = () => { const end = Date.now() + 5; while (Date.now() < end) {} crypto.randomBytes(1, burn); };
    crypto.randomBytes(1, burn);
    return { raw: "answered" };
  };`,
  "util.callbackify (process.nextTick)": `module.exports = async function () {
    const util = require("util");
    const tick = util.callbackify(async () => 1);
    const burn = () => { const end = Date.now() + 5; while (Date.now() < end) {} tick(burn); };
    tick(burn);
    return { raw: "answered" };
  };`,
  "an endless loop in a callback": `module.exports = async function () {
    require("crypto").randomBytes(1, () => { for (;;) {} });
    return { raw: "answered" };
  };`,
  "thread-pool work (pbkdf2)": `module.exports = async function () {
    const crypto = require("crypto");
    for (let i = 0; i < 2; i++) crypto.pbkdf2("x", "y", 50000000, 64, "sha512", () => {});
    return { raw: "answered" };
  };`,
};

const BYSTANDER = `module.exports = async function () { return { raw: "bystander" }; };`;

describe.skipIf(process.platform !== "linux")("attack: CPU work left behind by a sandbox run", () => {
  it.each(Object.entries(LINGERING))(
    "%s: the process is killed once idle, and the next runs are unaffected",
    async (_name, code) => {
      const api = client(svc.url);
      const attacker = await reactorTenant(api, svc.rootKey, [code]);
      const bystander = await reactorTenant(api, svc.rootKey, [BYSTANDER]);

      const first = await react(api, attacker);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.raw).toBe("answered");
      const pid = pidOf(svc, attacker.tenantId, code);
      expect(pid).toBeTypeOf("number");

      // Today the process keeps burning CPU for as long as it lives (60 s idle); the watchdog ends it.
      const deadline = Date.now() + 5000;
      while (processExists(pid as number) && Date.now() < deadline) await sleep(50);
      expect(processExists(pid as number)).toBe(false);

      // No duration is asserted (a loaded machine slows every run): the burning process is gone, so nothing of
      // the attacker's competes with the runs below, which are answered by their own code.
      const other = await react(api, bystander);
      expect(other.status).toBe(200);
      expect(other.body.raw).toBe("bystander");
      const again = await react(api, attacker);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(pidOf(svc, attacker.tenantId, code)).not.toBe(pid);
    },
  );
});
