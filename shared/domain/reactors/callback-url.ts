import type { Egress } from "#shared/ports/egress.ts";

/** Longest callback_url accepted. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/**
 * The checks react can make on callback_url before answering 202 (so an obviously unusable URL is a 400,
 * not a dead letter): absolute http(s) URL, no credentials, https unless private destinations are allowed,
 * at most MAX_CALLBACK_URL_LENGTH characters, not an always-refused IP literal. Every address is checked
 * again at delivery, at connect time (the egress's address rule).
 * Returns the reason for refusing it, or undefined.
 */
export function callbackUrlProblem(
  url: string,
  options: { allowPrivate: boolean; egress: Pick<Egress, "refusesAlways"> },
): string | undefined {
  if (url.length > MAX_CALLBACK_URL_LENGTH)
    return `The callback_url must be at most ${MAX_CALLBACK_URL_LENGTH} characters.`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "The callback_url must be an absolute URL.";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return "The callback_url must use http or https.";
  if (!options.allowPrivate && parsed.protocol !== "https:") return "The callback_url must use https.";
  if (parsed.username || parsed.password) return "The callback_url must not carry credentials.";
  // An address that delivery would refuse whatever the settings (link-local/metadata, the service's own
  // endpoints) is refused now; names are checked at delivery, at connect time.
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  if (options.egress.refusesAlways(parsed.hostname, port))
    return "The callback_url's address is one this service does not call.";
  return undefined;
}
