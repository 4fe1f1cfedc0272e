/**
 * The fuzz's oracle: what every answer of the service must hold, whatever the request was. Pure, so that the
 * unit test can feed it answers directly.
 */

export type Answer = { status: number; contentType: string; text: string };
/** A short, stable class name: the summary groups failures by route and kind. */
type Kind = ProblemKind | "no-answer" | "5xx" | "stack-trace" | "host-path" | "cross-tenant" | "disclosure";
type ProblemKind = "not-problem-json" | "bad-problem";
export type Violation = { kind: Kind | "prototype-pollution" | "canary"; detail: string };

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

export function checkAnswer(answer: Answer, context: CheckContext): Violation[] {
  const { status, text } = answer;
  if (status === 0) return [{ kind: "no-answer", detail: text.slice(0, 200) }];
  const violations: Violation[] = [];
  const add = (kind: Violation["kind"], detail: string) => violations.push({ kind, detail });
  const carried = (needle: string) => context.requestText.includes(needle);
  let body: unknown; // the answer as JSON, when it is JSON
  try {
    body = JSON.parse(text);
  } catch {}
  // On /proxy, answers about the tenant's side are not the service failing (docs/proxies.md): 500
  // transform-failed (the fuzz replaced a transform with code that exports no function), and 502 unreachable /
  // 504 timeout (the fuzz pointed a proxy at one of its hostile URLs, http://127.0.0.1:8000/ and the like).
  const proxyType = String((body as { proxy_error?: { type?: unknown } } | null)?.proxy_error?.type);
  const tenantSide = { 500: "/transform-failed", 502: "/unreachable", 504: "/timeout" }[status];
  if (status >= 500 && !(context.proxy && tenantSide && proxyType.endsWith(tenantSide)))
    add("5xx", `status ${status}${proxyType === "undefined" ? "" : ` ${proxyType}`}`);
  const frame = STACK_FRAME.exec(text);
  if (frame && !carried(frame[0])) add("stack-trace", `stack frame in body: ${frame[0].slice(0, 120)}`);
  const needle = HOST_NEEDLES.find((n) => text.includes(n) && !carried(n));
  if (needle) add("host-path", `body contains ${JSON.stringify(needle)}`);
  const problem = status >= 400 && status < 500 && problemShape(answer, context.proxy === true, body);
  if (problem) add(problem[0], `${status} ${problem[1]}`);
  for (const secret of context.secrets ?? [])
    if (text.includes(secret.value) && !carried(secret.value))
      add("disclosure", `answer holds ${secret.whose} card number in full`);
  if (context.crossTenant && status >= 200 && status < 300)
    add("cross-tenant", `status ${status} on another tenant's resource`);
  return violations;
}

/**
 * What is wrong with an RFC 9457 problem answer, if anything: application/problem+json with type, title and
 * the status it answered with. On /proxy, JSON whose `proxy_error` is such a problem (or a problem+json).
 */
function problemShape(answer: Answer, proxy: boolean, body: unknown): [ProblemKind, string] | undefined {
  let problem = body;
  if (!answer.contentType.toLowerCase().startsWith("application/problem+json")) {
    if (!proxy) return ["not-problem-json", `with content-type ${JSON.stringify(answer.contentType)}`];
    if (body === undefined) return ["not-problem-json", "/proxy error is not JSON"];
    problem = (body as { proxy_error?: unknown } | null)?.proxy_error;
    if (problem === undefined) return ["not-problem-json", "/proxy error without proxy_error"];
  }
  if (problem === undefined) return ["bad-problem", "problem body is not JSON"];
  if (typeof problem !== "object" || problem === null || Array.isArray(problem))
    return ["bad-problem", "problem body is not an object"];
  const { type, title, status } = problem as Record<string, unknown>;
  if (typeof type !== "string" || typeof title !== "string" || status !== answer.status)
    return ["bad-problem", `problem lacks type/title or says status ${JSON.stringify(status)}`];
}

/** The built-in prototypes watched: anything a request adds to them is prototype pollution. */
const PROTOTYPES = new Map<string, object>(
  [Object, Array, Function, String].map((c) => [c.name, c.prototype]),
);
export type PrototypeBaseline = Map<string, Set<string | symbol>>;

export const prototypeSnapshot = (): PrototypeBaseline =>
  new Map([...PROTOTYPES].map(([name, p]) => [name, new Set(Reflect.ownKeys(p))]));

/** What was added to the prototypes since `baseline` ("Object.prototype.x"): removed, so the run goes on. */
export function takePollution(baseline: PrototypeBaseline): string[] {
  return [...PROTOTYPES].flatMap(([name, p]) => {
    const added = Reflect.ownKeys(p).filter((key) => !baseline.get(name)?.has(key));
    for (const key of added) Reflect.deleteProperty(p, key);
    return added.map((key) => `${name}.prototype.${String(key)}`);
  });
}
