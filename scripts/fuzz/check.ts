/** The fuzz's oracle (docs/fuzzing.md, "What it checks"): pure, so that the unit test feeds it answers directly. */

export type Answer = { status: number; contentType: string; text: string };
/** `kind`: a failure class of docs/fuzzing.md ("5xx", "disclosure", "cross-tenant", …). */
export type Violation = { kind: string; detail: string };
export interface CheckContext {
  /** Everything the request carried (path, headers, body text): a needle echoed from it is not a leak. */
  requestText: string;
  /** Plaintext the caller may not see (another tenant's card number, or its own without a reveal rule). */
  secrets?: { value: string; whose: string }[];
  /** The request addressed another tenant's resource with this tenant's key. */
  crossTenant?: boolean;
  /** /proxy: the service's own errors are `{"proxy_error": <problem>}` (docs/proxies.md). */
  proxy?: boolean;
}

/** A V8 stack frame ("at fn (file:line:col)" or "at file:line:col"), and strings that betray the host. */
const STACK_FRAME = /\bat (?:[\w$.<>[\] ]+ \()?(?:file:\/\/)?[^\s()'"]*:\d+:\d+\)?/;
const HOST_NEEDLES = ["/work/", "node_modules", ".ts:", process.cwd()].filter((n) => n.length > 1);
/** /proxy answers about the tenant's side (its code failed, its destination unreachable or slow). */
const THEIRS: Record<number, string> = { 500: "/transform-failed", 502: "/unreachable", 504: "/timeout" };

export function checkAnswer({ status, contentType, text }: Answer, context: CheckContext): Violation[] {
  if (status === 0) return [{ kind: "no-answer", detail: text.slice(0, 200) }];
  const violations: Violation[] = [];
  const add = (kind: Violation["kind"], detail: string) => violations.push({ kind, detail });
  const carried = (needle: string) => context.requestText.includes(needle);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {}
  const wrapped = (body as { proxy_error?: unknown } | null)?.proxy_error;
  const proxyType = String((wrapped as { type?: unknown } | undefined)?.type);
  const tenantSide = context.proxy && proxyType.endsWith(THEIRS[status] ?? "\0");
  if (status >= 500 && !tenantSide)
    add("5xx", `status ${status}${wrapped === undefined ? "" : ` ${proxyType}`}`);
  const frame = STACK_FRAME.exec(text)?.[0];
  if (frame && !carried(frame)) add("stack-trace", `stack frame in body: ${frame.slice(0, 120)}`);
  const needle = HOST_NEEDLES.find((n) => text.includes(n) && !carried(n));
  if (needle) add("host-path", `body contains ${JSON.stringify(needle)}`);
  if (status >= 400 && status < 500) {
    // RFC 9457: application/problem+json with type, title and its own status; on /proxy, wrapped in proxy_error.
    const isProblemJson = contentType.toLowerCase().startsWith("application/problem+json");
    const problem = (isProblemJson ? body : context.proxy ? wrapped : undefined) as Record<string, unknown>;
    const named = typeof problem?.type === "string" && typeof problem.title === "string";
    if (!isProblemJson && problem === undefined)
      add("not-problem-json", `${status} with content-type ${JSON.stringify(contentType)}`);
    else if (!named || problem.status !== status)
      add("bad-problem", `${status} problem lacks type/title or status ${JSON.stringify(problem?.status)}`);
  }
  for (const secret of context.secrets ?? [])
    if (text.includes(secret.value) && !carried(secret.value))
      add("disclosure", `answer holds ${secret.whose} card number in full`);
  if (context.crossTenant && status >= 200 && status < 300)
    add("cross-tenant", `status ${status} on another tenant's resource`);
  return violations;
}

/** The built-in prototypes watched: anything a request adds to them is prototype pollution. */
const PROTOTYPES = [Object, Array, Function, String].map((c) => [c.name, c.prototype] as const);
export const prototypeSnapshot = () => PROTOTYPES.map(([, p]) => new Set(Reflect.ownKeys(p)));
type PrototypeBaseline = ReturnType<typeof prototypeSnapshot>;
/** What was added to the prototypes since `baseline` ("Object.prototype.x"): removed, so the run goes on. */
export const takePollution = (baseline: PrototypeBaseline): string[] =>
  PROTOTYPES.flatMap(([name, p], i) => {
    const added = Reflect.ownKeys(p).filter((key) => !baseline[i]?.has(key));
    for (const key of added) Reflect.deleteProperty(p, key);
    return added.map((key) => `${name}.prototype.${String(key)}`);
  });
