/**
 * A valid body per write route, by operation id: the fuzz mutates these field by field, so that hostile values
 * get past the shape checks a wholly random body never would. A route missing here is still fuzzed, with
 * generic hostile bodies only (the route list at the start says which).
 */
import { ownKeys } from "./values.ts";
import { CARDS, card } from "./world.ts";

const CARD = card(CARDS.example);

/** The batch's fixtures an example refers to. */
export type ExampleWorld = Record<
  "tokenId" | "otherTokenId" | "applicationId" | "formulaId" | "nonce" | "invitationCode" | "destinationUrl",
  string
>;

const rule = {
  description: "fuzz rule",
  priority: 1,
  container: "/fuzz/",
  conditions: [{ attribute: "id", operator: "starts_with", value: "tok" }],
  transform: "mask",
  permissions: ["token:read"],
};
const future = "2099-01-01T00:00:00Z";
const formula = {
  name: "fuzz formula",
  description: "d",
  type: "private",
  code: "module.exports = async function (req) { return { raw: req.args }; };",
  configuration: [{ name: "region", type: "string", description: "r" }],
  request_parameters: [{ name: "card.number", type: "string", description: "n", optional: false }],
};
const transform = { code: "module.exports = async function (req) { return req; };" };

type Example = (w: ExampleWorld) => unknown;
/** How a token is presented and found: what a caller without reveal must not turn into a disclosure. */
const presentation = {
  mask: { number: "{{ data.number | reveal_last: 4 }}" },
  containers: ["/fuzz/"],
  metadata: { origin: "fuzz" } as Record<string, unknown>,
  search_indexes: ["{{ data.number | last4 }}"],
  fingerprint_expression: "{{ data.number }}",
  expires_at: future,
};
const proxy = (w: ExampleWorld) => ({
  name: "fuzz proxy",
  destination_url: w.destinationUrl,
  request_transform: transform,
  response_transform: transform,
  application: { id: w.applicationId },
  configuration: { region: "eu" },
  require_auth: true,
});
const reactor = (w: ExampleWorld) => ({
  name: "fuzz reactor",
  configuration: { region: "eu" },
  application: { id: w.applicationId },
});

export const examples: Record<string, Example> = {
  advanceTestClock: () => ({ advance_seconds: 1 }),
  createTenant: () => ({
    name: "fuzz tenant",
    owner: { email: "owner@example.com", first_name: "F", last_name: "Z" },
  }),
  createApplication: () => ({
    name: "fuzz app",
    type: "private",
    permissions: ["token:read"],
    rules: [rule],
    create_key: true,
  }),
  updateApplication: () => ({ name: "fuzz app", permissions: ["token:read"], rules: [rule] }),
  createToken: () => ({
    id: "fuzz-token-id",
    type: "card",
    data: CARD,
    ...presentation,
    deduplicate_token: false,
  }),
  // No data: a patch of the mask alone is what must not reveal the stored data to a key without reveal.
  patchToken: () => ({ ...presentation, metadata: { origin: null, other: "x" }, deduplicate_token: null }),
  authorizeSession: (w) => ({
    nonce: w.nonce,
    permissions: ["token:read"],
    rules: [rule],
    expires_at: future,
  }),
  createInvitation: () => ({ email: "invitee@example.com" }),
  acceptInvitation: (w) => ({ code: w.invitationCode, first_name: "F", last_name: "Z" }),
  createProxy: proxy,
  replaceProxy: proxy,
  patchProxy: (w) => {
    const { response_transform: _, ...rest } = proxy(w);
    return { ...rest, request_transform: null, require_auth: false };
  },
  createFormula: () => formula,
  replaceFormula: () => formula,
  createReactor: (w) => ({ ...reactor(w), formula: { id: w.formulaId } }),
  replaceReactor: reactor,
  patchReactor: reactor,
  react: (w) => ({
    // The prototype keys reach the hostile reactor's parameters ("__proto__.expires_at", …) when it exists.
    args: ownKeys([
      ["card", { number: `{{ ${w.tokenId} }}` }],
      ["amount", 5],
      ["__proto__", { expires_at: "2000-01-01T00:00:00Z" }],
      ["constructor", { prototype: { mask: "polluted-by-fuzz" } }],
    ]),
    callback_url: w.destinationUrl,
  }),
};

/** The body of a proxied request: detokenization expressions, one of another tenant's token. */
export const proxyExample: Example = (w) => ({
  number: `{{ ${w.tokenId} }}`,
  last4: `{{ token: ${w.tokenId} | json }}`,
  other: `{{ ${w.otherTokenId} }}`,
});

/** The example of a route: by operation id, the proxied body for every /proxy route. */
export function exampleFor(route: { operationId: string; group: string }): Example | undefined {
  return route.group === "proxy" ? proxyExample : examples[route.operationId];
}
