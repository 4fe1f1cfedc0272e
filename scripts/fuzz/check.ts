/**
 * The fuzz's oracle: what every answer of the service must hold, whatever the request was. Pure, so that the
 * unit test can feed it answers directly.
 */

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** A short, stable class name: the summary groups failures by route and kind. */
type Kind =
  | "no-answer"
  | "5xx"
  | "stack-trace"
  | "host-path"
  | "not-problem-json"
  | "bad-problem"
  | "cross-tenant"
  | "disclosure"
  | "prototype-pollution"
  | "canary";
export type Violation = { kind: Kind; detail: string };

export interface CheckContext {
  /** Everything the request carried (path, query, body text): a needle echoed from it is not a leak. */
  requestText: string;
  /** Plaintext the caller may not see (another tenant's card number, or its own without a reveal rule). */
  secrets?: { value: string; whose: string }[];
  /** The request addressed another tenant's resource with this tenant's key. */
  crossTenant?: boolean;
  /** /proxy: the service's own errors are `{"proxy_error": <problem>}` (docs/proxies.md, the spec). */
  proxy?: boolean;
}

/** A V8 stack frame: "at fn (file:line:col)" or "at file:line:col". */
const STACK_FRAME = /\bat (?:[\w$.<>[\] ]+ \()?(?:file:\/\/)?[^\s()'"]*:\d+:\d+\)?/;
/** Strings that betray the host: its paths, its dependencies, its source files. */
const HOST_NEEDLES = ["/work/", "node_modules", ".ts:", process.cwd()].filter((n) => n.length > 1);

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

export function checkAnswer(answer: Answer, context: CheckContext): Violation[] {
  if (answer.status === 0) return [{ kind: "no-answer", detail: answer.text.slice(0, 200) }];
  const violations: Violation[] = [];
  const add = (kind: Kind, detail: string) => violations.push({ kind, detail });
  const carried = (needle: string) => context.requestText.includes(needle);
  const body = parse(answer.text) as { proxy_error?: { type?: unknown } } | undefined;
  // A proxy whose transform the fuzz replaced with code that exports no function answers 500
  // transform-failed, generic as designed (docs/proxies.md): the tenant's code failed. Any other 5xx counts.
  const transformFailed =
    context.proxy && answer.status === 500 && String(body?.proxy_error?.type).endsWith("/transform-failed");
  if (answer.status >= 500 && !transformFailed) add("5xx", `status ${answer.status}`);

  const frame = STACK_FRAME.exec(answer.text);
  if (frame && !carried(frame[0])) add("stack-trace", `stack frame in body: ${frame[0].slice(0, 120)}`);
  const needle = HOST_NEEDLES.find((n) => answer.text.includes(n) && !carried(n));
  if (needle) add("host-path", `body contains ${JSON.stringify(needle)}`);

  if (answer.status >= 400 && answer.status < 500) {
    const problem = problemShape(answer, context.proxy === true, body);
    if (problem) violations.push(problem);
  }
  for (const secret of context.secrets ?? [])
    if (answer.text.includes(secret.value) && !carried(secret.value))
      add("disclosure", `answer holds ${secret.whose} card number in full`);
  if (context.crossTenant && answer.status >= 200 && answer.status < 300)
    add("cross-tenant", `status ${answer.status} on another tenant's resource`);
  return violations;
}

/**
 * An RFC 9457 problem: application/problem+json with type, title and the status it answered with. On /proxy,
 * JSON whose `proxy_error` is such a problem (or a problem+json of its own).
 */
function problemShape(answer: Answer, proxy: boolean, parsed: unknown): Violation | undefined {
  const fail = (kind: Kind, detail: string): Violation => ({
    kind,
    detail: `${answer.status} ${detail}`,
  });
  let body = parsed;
  if (!answer.contentType.toLowerCase().startsWith("application/problem+json")) {
    if (!proxy) return fail("not-problem-json", `with content-type ${JSON.stringify(answer.contentType)}`);
    if (body === undefined) return fail("not-problem-json", "/proxy error is not JSON");
    body = (body as { proxy_error?: unknown } | null)?.proxy_error;
    if (body === undefined) return fail("not-problem-json", "/proxy error without proxy_error");
  }
  if (body === undefined) return fail("bad-problem", "problem body is not JSON");
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return fail("bad-problem", "problem body is not an object");
  const { type, title, status } = body as Record<string, unknown>;
  if (typeof type !== "string" || typeof title !== "string" || status !== answer.status)
    return fail("bad-problem", `problem lacks type/title or says status ${JSON.stringify(status)}`);
  return undefined;
}

/** The built-in prototypes watched: anything a request adds to them is prototype pollution. */
const PROTOTYPES: Record<string, object> = {
  "Object.prototype": Object.prototype,
  "Array.prototype": Array.prototype,
  "Function.prototype": Function.prototype,
  "String.prototype": String.prototype,
};

export function prototypeSnapshot(): Map<string, string[]> {
  return new Map(Object.entries(PROTOTYPES).map(([name, p]) => [name, Reflect.ownKeys(p).map(String)]));
}

/** Properties added since `baseline`, as "Object.prototype.expires_at". */
export function pollutionSince(baseline: Map<string, string[]>): string[] {
  return [...prototypeSnapshot()].flatMap(([name, keys]) =>
    keys.filter((key) => !baseline.get(name)?.includes(key)).map((key) => `${name}.${key}`),
  );
}

/** Removes what pollutionSince found, so that one polluting request does not fail every later one. */
export function cleanPollution(added: string[]): void {
  for (const entry of added) {
    const [owner, ...rest] = entry.split(".prototype.");
    const target = PROTOTYPES[`${owner}.prototype`];
    if (target) Reflect.deleteProperty(target, rest.join(".prototype."));
  }
}
