/**
 * The JSONPaths the `json` filter runs, parsed and walked here: `$`, then names (`.a`, `['a b']`), indexes (`[1]`)
 * and wildcards (`.*`, `[*]`), with at most one recursive descent (`..a`, `..*`, `..[1]`). Each step maps every node
 * to at most its children, so the work is linear in the data's size whatever the path.
 *
 * Not jsonpath-plus (which the sandbox's packages still offer to customer code): it runs a path to its end,
 * synchronously, where no render deadline can stop it, with no bound on its work; two descents or a union made
 * that grow with every level of the data (seconds, then the heap, for 60 levels). And it re-reads the path string
 * by its own rules (`;;` becomes `..`, quotes are matched loosely), so a check of the string before handing it
 * over did not bound what ran. The answers are jsonpath-plus's for this form (its first match, in its order), held
 * to it by a property test (test/unit/json-path.test.ts).
 */

type Step = { kind: "name"; name: string } | { kind: "all" };

/** Steps a path may have: every step after a descent goes over what the descent found. */
export const MAX_JSONPATH_STEPS = 32;
/**
 * Nodes one evaluation may go through (a descent's and every step's): each step is linear, but a descent over deep
 * data followed by many steps is not (32 steps over 32,000 levels took seconds before this bound).
 */
export const MAX_JSONPATH_VISITS = 100_000;

/** The walk went past MAX_JSONPATH_VISITS: stopped, with nothing answered. */
export class JsonPathTooCostly extends Error {
  constructor() {
    super("The JSONPath visits too much of the data.");
    this.name = "JsonPathTooCostly";
  }
}

export interface JsonPath {
  steps: Step[];
  /** The recursive descent's place: before `steps[descentAt]`. */
  descentAt: number | undefined;
}

/** A name after a dot: no JSONPath punctuation (jsonpath-plus would read `;`, `,`, `~`, `^`, … as operators). */
const DOTTED_NAME = /^[^.[\]*'"\s()?@,:;~^%$\\`]+/;
const BRACKET = /^\[(?:(\*)|(\d{1,9})|'([^'"\\[\]]*)'|"([^'"\\[\]]*)")\]/;

/** The path's steps, or undefined when it is not of the form above. */
export function parseJsonPath(path: string): JsonPath | undefined {
  if (!path.startsWith("$")) return undefined;
  const steps: Step[] = [];
  let descentAt: number | undefined;
  let rest = path.slice(1);
  while (rest.length > 0) {
    if (rest.startsWith("..")) {
      if (descentAt !== undefined) return undefined;
      descentAt = steps.length;
      rest = rest.slice(2);
    } else if (rest.startsWith(".")) rest = rest.slice(1);
    else if (!rest.startsWith("[")) return undefined;
    const bracket = BRACKET.exec(rest);
    const name = bracket ? undefined : rest.startsWith("*") ? "*" : DOTTED_NAME.exec(rest)?.[0];
    if (bracket) {
      const [whole, all, index, single, double] = bracket;
      steps.push(all ? { kind: "all" } : { kind: "name", name: index ?? single ?? double ?? "" });
      rest = rest.slice(whole.length);
    } else if (name === "*") {
      steps.push({ kind: "all" });
      rest = rest.slice(1);
    } else if (name) {
      steps.push({ kind: "name", name });
      rest = rest.slice(name.length);
    } else return undefined;
  }
  return descentAt === steps.length || steps.length > MAX_JSONPATH_STEPS ? undefined : { steps, descentAt };
}

/**
 * What a descent applies its step to: the node itself (a string too, as jsonpath-plus), and every container under
 * it, in pre-order (iteratively: data may be deep), each once: a value built in a template may hold one object at
 * several places.
 */
function descent(root: unknown, seen: Set<object>, visit: () => void): unknown[] {
  if (root === null || typeof root !== "object") return [root];
  const found: unknown[] = [];
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== "object" || seen.has(node)) continue;
    visit();
    seen.add(node);
    found.push(node);
    const children = Object.values(node);
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]);
  }
  return found;
}

function apply(step: Step, node: unknown): unknown[] {
  if (!node) return []; // as jsonpath-plus: nothing under a falsy value ("" has no `length` there)
  if (step.kind === "all") return typeof node === "object" ? Object.values(node) : [];
  // Own properties only, as jsonpath-plus (a string's `length` and indexes included).
  const holder = Object(node) as Record<string, unknown>;
  return Object.hasOwn(holder, step.name) ? [holder[step.name]] : [];
}

/** `nodes` with each object once, in order (the first match stays first). */
function once(nodes: unknown[]): unknown[] {
  const seen = new Set<object>();
  return nodes.filter(
    (node) => node === null || typeof node !== "object" || (!seen.has(node) && !!seen.add(node)),
  );
}

/** The first match of `path` in `json`, or undefined; JsonPathTooCostly past MAX_JSONPATH_VISITS nodes. */
export function firstMatch(json: unknown, path: JsonPath): unknown {
  let visits = 0;
  const visit = () => {
    if (++visits > MAX_JSONPATH_VISITS) throw new JsonPathTooCostly();
  };
  let nodes: unknown[] = [json];
  path.steps.forEach((step, at) => {
    if (at === path.descentAt) {
      const seen = new Set<object>();
      nodes = nodes.flatMap((node) => descent(node, seen, visit));
    }
    nodes = once(
      nodes.flatMap((node) => {
        visit();
        return apply(step, node);
      }),
    );
  });
  return nodes[0];
}
