import type { Actor, LogEntry } from "#shared/domain/audit.ts";
import { auditEvent, type LoggedToken, recordEvents, tokenReadEvents } from "#shared/domain/audit-entry.ts";
import type { UseAudit } from "#shared/domain/tokens/detokenize.ts";
import { MAX_DETOKENIZED } from "#shared/domain/tokens/detokenize.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { TokenTypes } from "./token-types.ts";

/** This process's remembered token types (true for as long as each token exists: a type never changes). */
const rememberedTypes = new TokenTypes();

export interface AuditedInvocation {
  tenantId: string;
  proxyId: string;
  actor: Actor;
  /** The request's method; never its path, which the caller chooses and may carry data (as access lines). */
  method: string;
  /** The ids in the request's detokenization expressions, known before any token is read. */
  tokenIds: readonly string[];
}

interface Deps {
  auditLog: AuditLogStore;
  clock: Clock;
  tokenTypes?: TokenTypes;
}

/** One `read` entry per token and the proxy's `invoke` entry, with the given messages. */
function proxyEntries(
  deps: Deps,
  call: AuditedInvocation,
  tokens: readonly LoggedToken[],
  messages: { read: string; invoke: string },
): LogEntry[] {
  const who = { tenantId: call.tenantId, actor: call.actor };
  return [
    ...tokenReadEvents(deps, who, tokens, messages.read),
    auditEvent(deps, who, "proxy", call.proxyId, "invoke", messages.invoke),
  ];
}

function entriesFor(deps: Deps, call: AuditedInvocation, tokens: readonly LoggedToken[]): LogEntry[] {
  return proxyEntries(deps, call, tokens, {
    read: `Token detokenized by proxy ${call.proxyId}`,
    invoke: `Proxy invoked: ${call.method}`,
  });
}

/** Entries saying that the entries written before a refused detokenization record an attempt, not a read. */
function refusalEntries(deps: Deps, call: AuditedInvocation, tokens: readonly LoggedToken[]): LogEntry[] {
  return proxyEntries(deps, call, tokens, {
    read: `Detokenization by proxy ${call.proxyId} refused: nothing was read or forwarded`,
    invoke: `Proxy invocation refused before forwarding: ${call.method}`,
  });
}

const sameTokens = (used: readonly LoggedToken[], written: readonly LoggedToken[]) => {
  const types = new Map(written.map((token) => [token.id, token.type] as const));
  return used.length === types.size && used.every((token) => types.get(token.id) === token.type);
};

/**
 * Runs a proxied request's detokenization and writes its audit entries (each token's `read`, the proxy's
 * `invoke`). `detokenize` gets the audit hook to hand createDetokenizer, which opens no token's data before
 * the hook has resolved: the entries are durably written before anything detokenized exists, let alone
 * leaves (fail closed). When this process already knows the type of every token named in the request, the
 * entries are written while the tokens are read (one DynamoDB round trip instead of two in sequence); the
 * hook then waits for that write. Otherwise the hook writes them once the tokens are read, as the entries
 * name each token's type. A request that detokenizes nothing gets its `invoke` entry all the same.
 *
 * A detokenization refused after its entries were written (unknown, expired or forbidden token, a limit, a
 * filter that failed on the data) answers the same error as without them; the log then holds, after those
 * entries, one per token and one for the proxy saying the detokenization was refused and nothing was
 * forwarded (best effort: the answer is the refusal whether or not they are written).
 */
export async function detokenizeAudited<T>(
  deps: Deps,
  call: AuditedInvocation,
  detokenize: (audit: UseAudit) => Promise<T>,
): Promise<T> {
  const types = deps.tokenTypes ?? rememberedTypes;
  const ids = [...new Set(call.tokenIds)];
  const known = ids.length <= MAX_DETOKENIZED ? types.typesOf(call.tenantId, ids) : undefined;
  const ahead = known?.map((type, index) => ({ id: ids[index] as string, type: type as TokenType }));
  const aheadWritten = ahead
    ? recordEvents(deps, entriesFor(deps, call, ahead)).then(
        () => true as const,
        (error: unknown) => ({ error }),
      )
    : undefined;
  /** What the log holds for this invocation, once written. */
  let written: readonly LoggedToken[] | undefined;

  const audit = async (used: readonly LoggedToken[]) => {
    if (ahead && aheadWritten) {
      const outcome = await aheadWritten;
      if (outcome !== true) throw outcome.error;
      written = ahead;
      // Always the same tokens (the ids came from the same expressions, and a type never changes); should
      // they differ, the entries for what is really used are written too before anything is opened.
      if (sameTokens(used, ahead)) return;
    }
    await recordEvents(deps, entriesFor(deps, call, used));
    written = used;
    types.remember(call.tenantId, used);
  };

  let value: T;
  try {
    value = await detokenize(audit);
  } catch (error) {
    if (!written && ahead && (await aheadWritten) === true) written = ahead;
    if (written) await recordEvents(deps, refusalEntries(deps, call, written)).catch(() => undefined);
    throw error;
  }
  // Nothing was detokenized (a binary body, or no expressions): the invocation is logged alone.
  if (!written) await audit([]);
  return value;
}
