import emailAddresses from "email-addresses";

/**
 * An e-mail address as RFC 5322 defines an addr-spec (with RFC 6532 UTF-8), parsed by `email-addresses`:
 * a bare address, no display name or group, with a domain that has a dot.
 */
export function isValidEmail(value: string): boolean {
  if (value.length > 254 || value !== value.trim()) return false;
  const parsed = emailAddresses.parseOneAddress({ input: value, rfc6532: true, rejectTLD: true });
  return parsed !== null && parsed.type === "mailbox" && !parsed.name && parsed.address === value;
}
