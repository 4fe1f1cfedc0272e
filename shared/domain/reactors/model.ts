import type { RequestParameter } from "./args.ts";

export type ConfigurationType = "string" | "number" | "boolean";

export interface StoredFormula {
  id: string;
  tenant_id: string;
  name: string;
  description?: string;
  type: "private";
  code: string;
  configuration: { name: string; type: ConfigurationType; description?: string }[];
  request_parameters: RequestParameter[];
  /** Where the code's `fetch` may go (docs/reactors.md); absent: anywhere the address rule allows. */
  allowed_hosts?: string[];
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

export interface StoredReactor {
  id: string;
  tenant_id: string;
  name: string;
  formula_id: string;
  configuration: Record<string, unknown>;
  application_id?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/**
 * Errors the reactor runtime offers to code, as globals: each carries the status the caller gets.
 * Prepended to the formula's code (its own scope, so the classes are fresh for every context).
 */
export const RUNTIME_PRELUDE = [
  "class BadRequestError extends Error { constructor(message, errors) { super(message); this.name = 'BadRequestError'; this.status = 400; if (errors !== undefined) this.body = { errors }; } }",
  "class AuthenticationError extends Error { constructor(message) { super(message); this.name = 'AuthenticationError'; this.status = 401; } }",
  "class PaymentRequiredError extends Error { constructor(message) { super(message); this.name = 'PaymentRequiredError'; this.status = 402; } }",
  "class AuthorizationError extends Error { constructor(message) { super(message); this.name = 'AuthorizationError'; this.status = 403; } }",
  "class RateLimitError extends Error { constructor(message) { super(message); this.name = 'RateLimitError'; this.status = 429; } }",
  "class ServiceUnavailableError extends Error { constructor(message) { super(message); this.name = 'ServiceUnavailableError'; this.status = 503; } }",
  "class CustomHttpResponseError extends Error { constructor({ status, body, message } = {}) { super(message || 'Custom response'); this.name = 'CustomHttpResponseError'; this.status = status; this.body = body; this.custom = true; } }",
].join("\n");
