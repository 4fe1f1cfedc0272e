import { type FieldErrors, validationError } from "./errors.ts";

/**
 * Fields a problem names at most: a body of 110,000 metadata entries, each of the wrong type, was answered with
 * every one of them (7.4 MB, past what a Lambda result holds; amplification review, 28 Nov 2026).
 */
export const MAX_PROBLEM_FIELDS = 100;

/** Messages one field keeps (zod may report several issues at one path). */
const MAX_FIELD_MESSAGES = 10;

/**
 * The characters of one message a field keeps: zod's "Unrecognized keys" message names every unknown key whole, so
 * a card's data of one 60,000-character key came back in full (round 12's note, mended at stop 50).
 */
export const MAX_FIELD_MESSAGE_CHARS = 500;

const cutMessage = (message: string) =>
  message.length > MAX_FIELD_MESSAGE_CHARS ? `${message.slice(0, MAX_FIELD_MESSAGE_CHARS)}…` : message;

/** The characters of one key a field's name keeps: the caller's own key, which it already knows in full. */
export const MAX_FIELD_KEY_CHARS = 64;

/** One key of a field's path as a problem names it: a long key cut short. */
export const fieldKey = (key: PropertyKey): string => {
  const text = String(key);
  return text.length > MAX_FIELD_KEY_CHARS ? `${text.slice(0, MAX_FIELD_KEY_CHARS)}…` : text;
};

/**
 * A field's name: its path's keys (each cut by fieldKey) joined by dots, under `prefix` (a name already made, such
 * as a batch request's path); "body" for the body itself.
 */
export function fieldName(path: readonly PropertyKey[], prefix = ""): string {
  const rest = path
    .filter((key) => key !== "")
    .map(fieldKey)
    .join(".");
  return (prefix && rest ? `${prefix}.${rest}` : prefix || rest) || "body";
}

/**
 * Where every input's field errors are gathered (request validation, a token's data, a batch's requests): names
 * are cut per key and at most MAX_PROBLEM_FIELDS fields are kept while the rest are only counted. Cut after
 * gathering, a key of a million characters under 250 bad requests made 250 names of 1 MB (a 100 MB problem), and
 * names longer than 16,383 characters, which V8 hashes by length alone, cost each new one a full comparison with
 * every one before it (1,000 of 100 KB held the process 24 s: review round 10, 28 Nov 2026).
 */
export class FieldErrorList {
  private readonly kept = new Map<string, string[]>();
  private readonly others = new Set<string>();

  /** Adds `message` to the field at `path` (its keys, not yet joined). */
  add(path: readonly PropertyKey[], message: string): void {
    this.addNamed(fieldName(path), message);
  }

  /** Adds `message` to a field already named (by fieldName, or a fixed name such as "body"). */
  addNamed(field: string, message: string): void {
    const messages = this.kept.get(field);
    if (messages) {
      if (messages.length < MAX_FIELD_MESSAGES) messages.push(cutMessage(message));
    } else if (this.kept.size < MAX_PROBLEM_FIELDS) this.kept.set(field, [cutMessage(message)]);
    else this.others.add(field);
  }

  /** Each issue of a failed parse (zod's issues), named under `prefix` (see fieldName). */
  addIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[], prefix = ""): this {
    for (const issue of issues) this.addNamed(fieldName(issue.path, prefix), issue.message);
    return this;
  }

  get size(): number {
    return this.kept.size + this.others.size;
  }

  /** The fields kept, as a problem's `errors`. */
  errors(): FieldErrors {
    return Object.fromEntries(this.kept);
  }

  /** A validation error with the fields kept, its detail saying how many there were when some were left out. */
  error(detail: string) {
    const more =
      this.others.size > 0 ? ` (the first ${this.kept.size} of ${this.size} fields in error are listed)` : "";
    return validationError(`${detail}${more}`, this.errors());
  }
}
