/**
 * A run's input with `args.body` parsed when it is JSON text (SandboxRequest.parseArgsBody), kept as the text it
 * is otherwise: what the local sandbox's child does inside the run's context (child-driver.mjs), for a sandbox
 * that cannot (the runner Lambda's event carries values, and the text escaped once more there made a 4 MiB answer
 * of quotes a 7 MB invoke, past Lambda's 6 MB: review round 8; LambdaSandbox falls back to the text, or to its
 * base64, where the value is the larger). In AWS the function calling the runner serves one request at a time,
 * so the parse costs that request alone.
 */
export function withArgsBodyParsed(input: unknown): unknown {
  return withArgsBody(input, (body) => {
    try {
      return JSON.parse(body);
    } catch {
      return body;
    }
  });
}

/** `args.body` as base64: 4/3 of the text whatever it holds (a JSON string's escapes can double it). */
export const withArgsBodyBase64 = (input: unknown): unknown =>
  withArgsBody(input, (body) => Buffer.from(body, "utf8").toString("base64"));

/** `args.body` decoded from base64 (the runner's side of withArgsBodyBase64). */
export const withArgsBodyDecoded = (input: unknown): unknown =>
  withArgsBody(input, (body) => Buffer.from(body, "base64").toString("utf8"));

/** The input with its `args.body` string replaced by `change(body)`; as it is when there is none. */
function withArgsBody(input: unknown, change: (body: string) => unknown): unknown {
  if (typeof input !== "object" || input === null || !("args" in input)) return input;
  const args = (input as { args: unknown }).args;
  if (typeof args !== "object" || args === null || !("body" in args)) return input;
  const body = (args as { body: unknown }).body;
  if (typeof body !== "string") return input;
  return { ...input, args: { ...args, body: change(body) } };
}
