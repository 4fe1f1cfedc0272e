import type { TokenType } from "#shared/domain/tokens/types.ts";

/** Tokens whose type this process remembers; beyond this the least recently used is forgotten. */
const MAX_REMEMBERED = 10_000;

/**
 * The types of tokens this process has detokenized, per tenant. A token's type never changes (an update keeps
 * it), so a remembered type stays true for as long as the token exists; it is not secret either (the audit log
 * shows it). The proxy uses it to write a request's audit entries, which name each token's type, while the
 * tokens are still being read (shared/domain/proxies/audit-before-forward.ts).
 */
export class TokenTypes {
  private readonly types = new Map<string, TokenType>();

  constructor(private readonly limit = MAX_REMEMBERED) {}

  /** The types of all `ids`, in order, or undefined when any of them is not remembered. */
  typesOf(tenantId: string, ids: readonly string[]): TokenType[] | undefined {
    const found: TokenType[] = [];
    for (const id of ids) {
      const type = this.types.get(keyOf(tenantId, id));
      if (type === undefined) return undefined;
      found.push(type);
    }
    return found;
  }

  remember(tenantId: string, tokens: readonly { id: string; type: TokenType }[]): void {
    for (const token of tokens) {
      const key = keyOf(tenantId, token.id);
      // Re-inserted: the Map's order is least recently remembered first.
      this.types.delete(key);
      this.types.set(key, token.type);
    }
    while (this.types.size > this.limit) this.types.delete(this.types.keys().next().value as string);
  }
}

const keyOf = (tenantId: string, id: string) => `${tenantId}\u0000${id}`;
