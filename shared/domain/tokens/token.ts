import { jsonTextDepth, MAX_JSON_DEPTH } from "../json-guard.ts";
import type { TokenType } from "./types.ts";

/**
 * A mask is stored as a map in the token's item: what DynamoDB keeps, at most this many bytes of JSON.
 * (Here, not in expression-checks.ts: the route schemas read it without loading the expression engine.)
 */
export const MAX_MASK_BYTES = 32 * 1024;

/** Token data is at most this many bytes of JSON (UTF-8), on every write: create, PATCH, merge results. */
export const MAX_DATA_BYTES = 64 * 1024;

/**
 * Why `data` is too large to keep as a token's data, or undefined when it is not: more than MAX_DATA_BYTES of
 * JSON, or nested deeper than a request body may nest (MAX_JSON_DEPTH). Every write passes here (the create
 * schemas and sealData), so data a reactor's tokenize block or code's `svc` call returns is held to the limits a
 * body is: data 1,000 levels deep, stored by a reactor, had every masked read walk paths as long (review s54).
 */
export function dataSizeProblem(data: unknown): string | undefined {
  const text = JSON.stringify(data ?? null);
  if (Buffer.byteLength(text, "utf8") > MAX_DATA_BYTES)
    return `must serialize to at most ${MAX_DATA_BYTES} bytes of JSON`;
  // Nesting deeper than the limit takes more opening brackets than a shorter text holds.
  if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    return `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`;
  return undefined;
}

/** Where a token sits in its tenant's listing (newest first, by descending position): what cursors go on from. */
export const listingPosition = (token: Pick<StoredToken, "created_at" | "id">): string =>
  `${token.created_at}#${token.id}`;

/** A token as stored: data and cvc only ever as ciphertext. */
export interface StoredToken {
  id: string;
  tenant_id: string;
  type: TokenType;
  container: string;
  sealed_data: string;
  sealed_cvc?: string;
  cvc_expires_at?: string;
  mask?: unknown;
  metadata?: Record<string, string>;
  search_indexes?: string[];
  /** Keyed hashes of the search index values (never the values). */
  search_hashes?: string[];
  fingerprint: string;
  fingerprint_expression: string;
  deduplicate_token?: boolean;
  expires_at?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
  /** Optimistic concurrency: each update requires the version it read. */
  version: number;
  /** How many of the version's steps were re-seals under newer keys (rewraps): none changed what a caller sees. */
  reseals?: number;
  /** Set while an open transaction holds the token (its create, update or delete awaits commit). */
  lock?: TokenLock;
}

type CvcFields = Partial<Pick<StoredToken, "sealed_cvc" | "cvc_expires_at">>;

/**
 * The end of the hour of a cvc that a write carries over from the token it read (the same cvc, kept), if any:
 * the store writes it back only while the token still holds it, as the sweep may have removed it since the read.
 */
export function carriedCvcEnd(next: CvcFields, read: CvcFields): string | undefined {
  const kept = next.sealed_cvc && read.sealed_cvc && next.cvc_expires_at === read.cvc_expires_at;
  return kept ? read.cvc_expires_at : undefined;
}

export interface TokenLock {
  transactionId: string;
  operation: "create" | "update" | "delete";
  /** Epoch seconds: past this the transaction is rolled back and the lock no longer holds. */
  expiresEpoch: number;
  /**
   * A `POST /tokenize` batch's (the service's own, committed within its request), not a caller's transaction:
   * epoch seconds past which its request can no longer be running (it died; the sweep ends the batch).
   */
  batchAnswerBy?: number;
}

/** The open transaction a write joins (SVC-TRANSACTION-ID). */
export interface TransactionContext {
  id: string;
  expiresEpoch: number;
  /** A `POST /tokenize` batch (openBatch), committed or rolled back by its request before this epoch second. */
  batchAnswerBy?: number;
}

declare const mayHold: unique symbol;

/**
 * A transaction the caller may hold an existing token in: only `holdTokens` (transactions.ts) makes one, so no
 * write can lock a token without passing that check.
 */
export type TokenHold = TransactionContext & { readonly [mayHold]: true };

/** One way a grant lets a caller see tokens (all fields of a clause must hold). */
export interface VisibilityClause {
  containerPrefix?: string;
  containerEquals?: string;
  idEquals?: string;
  idPrefix?: string;
}

/**
 * Which tokens a list shows and counts (tokens/visibility.ts): every one (undefined), else those matching at
 * least one clause of every set, one set per grant the caller's access is made of (a session's and its
 * application's). No sets, or a set without clauses: none.
 */
export type Visibility = VisibilityClause[][] | undefined;

export interface TokenListFilter {
  types?: string[];
  /** Tokens in this container or below it. */
  containerPrefix?: string;
  /** Tokens with this fingerprint. */
  fingerprint?: string;
  /** Lowercased keys and values; matched against the lowercased copy of each token's metadata. */
  metadata?: Record<string, string>;
  /** Undefined: every token of the tenant is visible. */
  visibility?: Visibility;
  /** Tokens expiring at or before this instant are left out. */
  now: Date;
}

export function isExpired(token: Pick<StoredToken, "expires_at">, now: Date): boolean {
  return token.expires_at !== undefined && Date.parse(token.expires_at) <= now.getTime();
}

/** Expired, or created in a transaction not yet committed: to everyone else such a token does not exist. */
export function isLive(token: Pick<StoredToken, "expires_at" | "lock">, now: Date): boolean {
  return !isExpired(token, now) && token.lock?.operation !== "create";
}

/**
 * The token's version as its callers know it: its version less the re-seals (a rewrap moves the version, for the
 * writes racing it, but changes nothing a caller was shown). An idempotent replay compares this one.
 */
export const callerVersion = (token: Pick<StoredToken, "version" | "reseals">): number =>
  token.version - (token.reseals ?? 0);
