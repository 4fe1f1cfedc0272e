/**
 * The fuzz's oracle: what every answer of the service must hold, whatever the request was. Pure, so that the
 * unit test can feed it answers directly.
 */

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

export interface Violation {
  /** Short, stable class name: the summary groups failures by route and kind. */
  kind:
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
  detail: string;
}

/** A V8 stack frame: "at fn (file:line:col)" or "at file:line:col". */
const STACK_FRAME = /\bat (?:[\w$.<>[\] ]+ \()?(?:file:\/\/)?[^\s()'"]*:\d+:\d+\)?/;
/** Strings that betray the host: its paths, its dependencies, its source files. */
const HOST_NEEDLES = ["/work/", "node_modules", ".ts:", process.cwd()].filter((n) => n.length > 1);

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

/**
 * A proxy whose transform the fuzz itself replaced with code that parses but exports no function (`{{ data }}`,
 * `apply`: valid JavaScript) answers 500 `transform-failed`, generic as designed (docs/proxies.md): the tenant's
 * code failed, not the service. Any other 5xx still counts.
 */
function transformFailed(answer: Answer): boolean {
  if (answer.status !== 500) return false;
  try {
    const body = JSON.parse(answer.text) as { proxy_error?: { type?: unknown } };
    return typeof body.proxy_error?.type === "string" && body.proxy_error.type.endsWith("/transform-failed");
  } catch {
    return false;
  }
}

export function checkAnswer(answer: Answer, context: CheckContext): Violation[] {
  const violations: Violation[] = [];
  if (answer.status === 0) return [{ kind: "no-answer", detail: answer.text.slice(0, 200) }];
  if (answer.status >= 500 && !(context.proxy && transformFailed(answer)))
    violations.push({ kind: "5xx", detail: `status ${answer.status}` });

  const frame = STACK_FRAME.exec(answer.text);
  if (frame && !context.requestText.includes(frame[0]))
    violations.push({ kind: "stack-trace", detail: `stack frame in body: ${frame[0].slice(0, 120)}` });
  for (const needle of HOST_NEEDLES) {
    if (answer.text.includes(needle) && !context.requestText.includes(needle)) {
      violations.push({ kind: "host-path", detail: `body contains ${JSON.stringify(needle)}` });
      break;
    }
  }

  if (answer.status >= 400 && answer.status < 500) {
    const problem = context.proxy ? proxyErrorShape(answer) : problemShape(answer);
    if (problem) violations.push(problem);
  }
  for (const secret of context.secrets ?? [])
    if (answer.text.includes(secret.value) && !context.requestText.includes(secret.value))
      violations.push({ kind: "disclosure", detail: `answer holds ${secret.whose} card number in full` });
  if (context.crossTenant && answer.status >= 200 && answer.status < 300)
    violations.push({
      kind: "cross-tenant",
      detail: `status ${answer.status} on another tenant's resource`,
    });
  return violations;
}

/** A /proxy error: JSON whose `proxy_error` is an RFC 9457 problem with the answer's status. */
function proxyErrorShape(answer: Answer): Violation | undefined {
  if (answer.contentType.toLowerCase().startsWith("application/problem+json")) return problemShape(answer);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return { kind: "not-problem-json", detail: `${answer.status} /proxy error is not JSON` };
  }
  const inner = (body as { proxy_error?: unknown } | null)?.proxy_error;
  if (inner === undefined)
    return { kind: "not-problem-json", detail: `${answer.status} /proxy error without proxy_error` };
  return problemShape({ ...answer, contentType: "application/problem+json", text: JSON.stringify(inner) });
}

/** An RFC 9457 problem: application/problem+json with type, title and the status it answered with. */
function problemShape(answer: Answer): Violation | undefined {
  if (!answer.contentType.toLowerCase().startsWith("application/problem+json"))
    return {
      kind: "not-problem-json",
      detail: `${answer.status} with content-type ${JSON.stringify(answer.contentType)}`,
    };
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return { kind: "bad-problem", detail: `${answer.status} problem body is not JSON` };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { kind: "bad-problem", detail: `${answer.status} problem body is not an object` };
  const { type, title, status } = body as Record<string, unknown>;
  if (typeof type !== "string" || typeof title !== "string" || status !== answer.status)
    return {
      kind: "bad-problem",
      detail: `${answer.status} problem lacks type/title or says status ${JSON.stringify(status)}`,
    };
  return undefined;
}

/** Own properties of the built-in prototypes: anything added by a request is prototype pollution. */
export function prototypeSnapshot(): Map<string, string[]> {
  const targets: [string, object][] = [
    ["Object.prototype", Object.prototype],
    ["Array.prototype", Array.prototype],
    ["Function.prototype", Function.prototype],
    ["String.prototype", String.prototype],
  ];
  return new Map(targets.map(([name, target]) => [name, Reflect.ownKeys(target).map(String).sort()]));
}

/** Properties added since `baseline`, as "Object.prototype.expires_at". */
export function pollutionSince(baseline: Map<string, string[]>): string[] {
  const added: string[] = [];
  for (const [name, keys] of prototypeSnapshot()) {
    const before = new Set(baseline.get(name) ?? []);
    for (const key of keys) if (!before.has(key)) added.push(`${name}.${key}`);
  }
  return added;
}

/** Removes what pollutionSince found, so that one polluting request does not fail every later one. */
export function cleanPollution(added: string[]): void {
  const targets: Record<string, object> = {
    "Object.prototype": Object.prototype,
    "Array.prototype": Array.prototype,
    "Function.prototype": Function.prototype,
    "String.prototype": String.prototype,
  };
  for (const entry of added) {
    const [owner, ...rest] = entry.split(".prototype.");
    const target = targets[`${owner}.prototype`];
    if (target) Reflect.deleteProperty(target, rest.join(".prototype."));
  }
}
