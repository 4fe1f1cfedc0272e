"use strict";
/**
 * The typed errors tenant code throws to choose its answer (docs/reactors.md, "Errors"). Evaluated inside each
 * run's own context (so they extend that context's Error), offered as globals and as
 * `require("@basis-theory/basis-theory-reactor-formulas-sdk-js")`, the hosted vault's reactor-errors SDK, whose
 * names, constructor arguments and statuses they follow, so formulas written for it run unchanged.
 *
 * Constructor arguments, for every class with a fixed status:
 * - `()`: the class's title as message, no `errors`;
 * - `(message: string)`: that message, and `errors: { error: [message] }`;
 * - `(errors: object | array | Error)`: the title as message, `errors` made a map of string lists
 *   (an array or an Error under `error`, other values stringified, as the SDK does);
 * - `(message: string, errors)`: both (this service's earlier `BadRequestError(message, errors)`).
 * The status and `errors` are what the caller gets (problem+json); see shared/domain/reactors/run-error.ts.
 */

/** One value as a message: strings as they are, objects as JSON (what the SDK answers for them). */
function textOf(value) {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "invalid";
  if (value instanceof Error) return String(value.message);
  if (typeof value === "object") {
    try {
      return JSON.stringify(value);
    } catch {
      return "[object]";
    }
  }
  return String(value);
}

/** `errors` as a map of string lists, or undefined for none. */
function errorsOf(value) {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Error) return { error: [textOf(value)] };
  if (Array.isArray(value)) return { error: value.map(textOf) };
  if (typeof value === "object") {
    const errors = {};
    for (const key of Object.keys(value)) {
      const entry = value[key];
      errors[key] = Array.isArray(entry) ? entry.map(textOf) : [textOf(entry)];
    }
    return errors;
  }
  return { error: [textOf(value)] };
}

/** The SDK's base class: `new BasisTheoryReactorError({ message, status, errors })`. */
class BasisTheoryReactorError extends Error {
  constructor({ message, status, errors } = {}) {
    super(typeof message === "string" ? message : "Reactor Error");
    this.name = "BasisTheoryReactorError";
    this.status = Number.isInteger(status) ? status : 500;
    const sanitized = errorsOf(errors);
    if (sanitized !== undefined) this.errors = sanitized;
  }

  toRFC7807() {
    return { detail: this.message, status: this.status, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

/** The arguments of a fixed-status class (see the file comment) as the base class's options. */
function optionsOf(title, status, first, second) {
  const message = typeof first === "string" ? first : title;
  return { message, status, errors: second !== undefined ? second : first };
}

/**
 * A class with a fixed status and title, named `name` (the key of a computed property names a class expression,
 * so `constructor.name` and stack traces say e.g. "BadRequestError", as the SDK's do).
 */
function fixedStatusError(name, title, status) {
  return {
    [name]: class extends BasisTheoryReactorError {
      constructor(first, second) {
        super(optionsOf(title, status, first, second));
        this.name = name;
      }
    },
  }[name];
}

const BadRequestError = fixedStatusError("BadRequestError", "Bad Request", 400);
const InvalidReactorConfigurationError = fixedStatusError(
  "InvalidReactorConfigurationError",
  "Invalid Reactor Configuration",
  400,
);
const AuthenticationError = fixedStatusError("AuthenticationError", "Authentication Failed", 401);
const InvalidPaymentMethodError = fixedStatusError(
  "InvalidPaymentMethodError",
  "Invalid Payment Method",
  402,
);
/** This service's earlier name for a 402 (kept so existing formulas keep working). */
const PaymentRequiredError = fixedStatusError("PaymentRequiredError", "Payment Required", 402);
const AuthorizationError = fixedStatusError("AuthorizationError", "Forbidden", 403);
const RateLimitError = fixedStatusError("RateLimitError", "Rate Limit Exceeded", 429);
/** 500, for a vendor's 5xx or a failure the formula caught: `new ReactorRuntimeError(error)`. */
const ReactorRuntimeError = fixedStatusError("ReactorRuntimeError", "Reactor Runtime Error", 500);
const ServiceUnavailableError = fixedStatusError("ServiceUnavailableError", "Service Unavailable", 503);

/** Answers exactly `status` (200–599) and `body` instead of a problem. */
class CustomHttpResponseError extends Error {
  constructor({ status, headers, body, message } = {}) {
    super(typeof message === "string" ? message : "Custom HTTP response");
    this.name = "CustomHttpResponseError";
    if (!Number.isInteger(status) || status < 100 || status > 599)
      throw new Error("status is not a valid integer");
    this.status = status;
    this.headers = headers ?? {};
    this.body = body ?? {};
  }

  toResponseBody() {
    return { status: this.status, headers: this.headers, body: this.body };
  }
}

module.exports = {
  BasisTheoryReactorError,
  AuthenticationError,
  AuthorizationError,
  BadRequestError,
  CustomHttpResponseError,
  // The SDK's earlier name for the same thing.
  CustomHttpResponse: CustomHttpResponseError,
  InvalidPaymentMethodError,
  InvalidReactorConfigurationError,
  PaymentRequiredError,
  RateLimitError,
  ReactorRuntimeError,
  ServiceUnavailableError,
};
