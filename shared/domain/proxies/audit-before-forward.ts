import type { Actor, LogEntry } from "#shared/domain/audit.ts";
import { auditEntry } from "#shared/domain/audit-entry.ts";
import { MAX_DETOKENIZED } from "#shared/domain/tokens/detokenize.ts";
import { auditEntityType, type TokenType } from "#shared/domain/tokens/types.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { TokenTypes } from "./token-types.ts";

/** This process's remembered token types (true for as long as each token exists: a type never changes). */
const rememberedTypes = new TokenTypes();

export interface AuditedInvocation {
  tenantId: string;
  proxyId: string;
  actor: Actor;
  now: Date;
  method: string;
  pathSuffix: string;
  /** The ids in the request's detokenization expressions, known before any token is read. */
  tokenIds: readonly string[];
}

interface Deps {
  auditLog: AuditLogStore;
  tokenTypes?: TokenTypes;
}

/** One `read` entry per token and the proxy's `invoke` entry, with the given messages. */
function proxyEntries(
  call: AuditedInvocation,
  tokens: readonly { id: string; type: TokenType }[],
  messages: { read: string; invoke: string },
): LogEntry[] {
  return [
    ...tokens.map((token) =>
      auditEntry(call.now, call.actor, {
        tenantId: call.tenantId,
        entityType: auditEntityType(token.type),
        entityId: token.id,
        operation: "read",
        message: messages.read,
      }),
    ),
    auditEntry(call.now, call.actor, {
      tenantId: call.tenantId,
      entityType: "proxy",
      entityId: call.proxyId,
      operation: "invoke",
      message: messages.invoke,
    }),
  ];
}

function entriesFor(call: AuditedInvocation, tokens: readonly { id: string; type: TokenType }[]): LogEntry[] {
  return proxyEntries(call, tokens, {
    read: `Token detokenized by proxy ${call.proxyId}`,
    invoke: `Proxy invoked: ${call.method} ${call.pathSuffix || "/"}`,
  });
}

/** Entries saying that the entries written ahead of a refused detokenization record an attempt, not a read. */
function refusalEntries(
  call: AuditedInvocation,
  tokens: readonly { id: string; type: TokenType }[],
): LogEntry[] {
  return proxyEntries(call, tokens, {
    read: `Detokenization by proxy ${call.proxyId} refused: nothing was read or forwarded`,
    invoke: `Proxy invocation refused before forwarding: ${call.method} ${call.pathSuffix || "/"}`,
  });
}

const sameTokens = (
  used: readonly { id: string; type: TokenType }[],
  written: ReadonlyMap<string, TokenType>,
) => used.length === written.size && used.every((token) => written.get(token.id) === token.type);

/**
 * Runs a proxied request's detokenization and writes its audit entries (each token's `read`, the proxy's
 * `invoke`): resolved only once both have succeeded, so nothing detokenized can leave before its entries are
 * durably written (fail closed). When this process already knows the type of every token named in the
 * request, the entries are written while the tokens are read (one DynamoDB round trip instead of two in
 * sequence); otherwise after the reads, as the entries name each token's type.
 *
 * A detokenization refused after its entries were written (unknown, expired or forbidden token, a limit) answers
 * the same error as without them; the log then holds, after those entries, one per token and one for the proxy
 * saying the detokenization was refused and nothing was forwarded (best effort: the answer is the refusal
 * whether or not they are written).
 */
export async function detokenizeAudited<T>(
  deps: Deps,
  call: AuditedInvocation,
  detokenize: () => Promise<T>,
  usedTokens: () => readonly { id: string; type: TokenType }[],
): Promise<T> {
  const types = deps.tokenTypes ?? rememberedTypes;
  const ids = [...new Set(call.tokenIds)];
  const known = ids.length <= MAX_DETOKENIZED ? types.typesOf(call.tenantId, ids) : undefined;
  if (!known) {
    const value = await detokenize();
    const used = usedTokens();
    await deps.auditLog.append(entriesFor(call, used));
    types.remember(call.tenantId, used);
    return value;
  }

  const ahead = ids.map((id, index) => ({ id, type: known[index] as TokenType }));
  const written = deps.auditLog.append(entriesFor(call, ahead)).then(
    () => true,
    (error: unknown) => error,
  );
  let value: T;
  try {
    value = await detokenize();
  } catch (error) {
    if ((await written) === true)
      await deps.auditLog.append(refusalEntries(call, ahead)).catch(() => undefined);
    throw error;
  }
  const outcome = await written;
  if (outcome !== true) throw outcome;
  const used = usedTokens();
  // Always the same tokens (the ids came from the same expressions, and a type never changes); should they
  // differ, the entries for what was really read are written before anything leaves.
  if (!sameTokens(used, new Map(ahead.map((token) => [token.id, token.type]))))
    await deps.auditLog.append(entriesFor(call, used));
  return value;
}
