import type http from "node:http";
import type https from "node:https";
import { guardedAgents } from "./address-guard.ts";

/** An idle connection is closed after this long: below the 5 s keep-alive timeout of Node servers (and most others'), so a reused connection is rarely one the destination is closing. */
export const IDLE_CONNECTION_MS = 4_000;
/**
 * Connections one tenant's pool holds at once, per scheme (its proxies, callbacks and code's fetches together);
 * further requests wait in the agent's queue within their own timeouts. The host's descriptor table is shared by
 * every tenant's requests and the store: 20 reactions of one tenant, each with the 50 fetches a run may have in
 * flight to a destination that never answers, held 1,000 sockets for 10 s (sandbox review of 28 Nov 2026).
 */
export const MAX_TENANT_SOCKETS = 100;
/** Tenants whose connection pools are kept; beyond this the least recently used one is dropped. */
const MAX_POOLS = 256;

export interface Pool {
  "http:": http.Agent;
  "https:": https.Agent;
  /** performance.now() of the last call's start or end. */
  lastActive: number;
}
const pools = new Map<string, Pool>();

/**
 * Connections are kept alive and reused, but only within one tenant: each tenant has its own agents, so
 * no socket or TLS session is ever shared between tenants' calls. Every new connection passes the
 * connect-time address check; a reused one passed it when it was opened, to the address it still uses.
 */
export function poolOf(tenantId: string, allowPrivate: boolean): Pool {
  const key = `${allowPrivate ? "plain" : "filtered"}:${tenantId}`;
  const now = performance.now();
  let pool = pools.get(key);
  if (pool) pools.delete(key); // re-inserted below: the Map's order is least recently used first
  // Idle sockets close on a timer, but a frozen process (a Lambda between invocations) runs no timers: a
  // pool unused for longer than the idle limit may hold connections the destination has closed meanwhile,
  // and a POST must not be sent on one (it would fail, and is not retried). Such a pool is replaced.
  // A pool still holding connections in use (or requests queued for one) is kept, its idle connections closed:
  // replacing it gave the tenant a fresh MAX_TENANT_SOCKETS while the old pool's were still held by requests in
  // flight, so pausing past the idle limit between bursts multiplied the cap (review of 28 Nov 2026).
  if (pool && now - pool.lastActive > IDLE_CONNECTION_MS) {
    if (inUse(pool)) closeIdle(pool);
    else pool = undefined;
  }
  if (!pool) {
    const options = {
      keepAlive: true,
      timeout: IDLE_CONNECTION_MS,
      scheduling: "lifo" as const,
      maxTotalSockets: MAX_TENANT_SOCKETS,
    };
    // The address rule applies in both modes; allowPrivate only lifts the private-address part of it.
    pool = { ...guardedAgents(options, allowPrivate), lastActive: now };
  }
  pool.lastActive = now;
  pools.set(key, pool);
  // A dropped pool is not destroyed: requests in flight finish, then its idle sockets time out.
  if (pools.size > MAX_POOLS) pools.delete(pools.keys().next().value as string);
  return pool;
}

type Agent = http.Agent | https.Agent;
const agentsOf = (pool: Pool): Agent[] => [pool["http:"], pool["https:"]];
const busy = (agent: Agent) =>
  Object.values(agent.sockets).some((list) => (list?.length ?? 0) > 0) ||
  Object.values(agent.requests).some((list) => (list?.length ?? 0) > 0);

/** Whether any of the pool's connections carries a request, or a request waits for one. */
function inUse(pool: Pool): boolean {
  return agentsOf(pool).some(busy);
}

/**
 * Closes the pool's idle connections (they may be ones the destination closed meanwhile). Destroyed, they leave
 * the agent as any closed socket does (its count with them); the agent skips a destroyed one until then.
 */
function closeIdle(pool: Pool): void {
  for (const agent of agentsOf(pool))
    for (const list of Object.values(agent.freeSockets))
      for (const socket of [...(list ?? [])]) socket.destroy();
}
