/**
 * A run's input with `args.body` parsed when it is JSON text (SandboxRequest.parseArgsBody), kept as the text it
 * is otherwise: what the local sandbox's child does inside the run's context (child-driver.mjs), for a sandbox
 * that cannot (the runner Lambda's event carries values, and the text escaped once more there made a 4 MiB answer
 * of quotes a 7 MB invoke, past Lambda's 6 MB: review round 8; LambdaSandbox falls back to the text where the
 * value is the larger). In AWS the function calling the runner serves one request at a time, so the parse costs
 * that request alone.
 */
export function withArgsBodyParsed(input: unknown): unknown {
  if (typeof input !== "object" || input === null || !("args" in input)) return input;
  const args = (input as { args: unknown }).args;
  if (typeof args !== "object" || args === null || !("body" in args)) return input;
  const body = (args as { body: unknown }).body;
  if (typeof body !== "string") return input;
  try {
    return { ...input, args: { ...args, body: JSON.parse(body) } };
  } catch {
    return input;
  }
}
