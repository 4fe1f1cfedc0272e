import { nodeEgress } from "#shared/egress/egress.ts";
import type { Egress } from "#shared/ports/egress.ts";

/** Outbound HTTP for proxies and callbacks (tenant code's fetch uses the same module from the sandbox host). */
export function egress(): { egress: Egress } {
  return { egress: nodeEgress };
}
