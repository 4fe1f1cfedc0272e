/** Cursors of the in-memory stores: a listing position, opaque to callers as the DynamoDB stores' are. */
export const encodePosition = (position: string) => Buffer.from(position, "utf8").toString("base64url");

export function decodePosition(cursor: string): string | undefined {
  const decoded = Buffer.from(cursor, "base64url").toString("utf8");
  return decoded.length > 0 ? decoded : undefined;
}
