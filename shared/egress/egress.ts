import type { Egress } from "#shared/ports/egress.ts";
import { refusal } from "./address-guard.ts";
import { forward } from "./forward.ts";

/** The Egress port over Node's http(s) clients: the one the composition root wires. */
export const nodeEgress: Egress = {
  forward,
  refusesAlways: (hostname, port) => refusal(hostname, port) !== undefined,
};
