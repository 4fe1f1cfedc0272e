/**
 * A valid body per write route, by operation id: the fuzz mutates these field by field, so that hostile values
 * get past the shape checks a wholly random body never would. A route missing here is still fuzzed, with
 * generic hostile bodies only (the route list at the start says which). `<name>` is one of the batch's
 * fixtures (`Placeholder`), filled in when the case is sent.
 */
import { CARDS, card } from "./world.ts";

export type Placeholder =
  | "tokenId"
  | "otherTokenId"
  | "applicationId"
  | "formulaId"
  | "nonce"
  | "destinationUrl";

const conditions = [{ attribute: "id", operator: "starts_with", value: "tok" }];
const permissions = ["token:read"];
const rule = {
  description: "fuzz rule",
  priority: 1,
  container: "/fuzz/",
  conditions,
  transform: "mask",
  permissions,
};
const application = { name: "fuzz app", permissions, rules: [rule] };
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
/** How a token is presented and found: what a caller without reveal must not turn into a disclosure. */
const presentation = {
  mask: { number: "{{ data.number | reveal_last: 4 }}" },
  containers: ["/fuzz/"],
  metadata: { origin: "fuzz" },
  search_indexes: ["{{ data.number | last4 }}"],
  fingerprint_expression: "{{ data.number }}",
  expires_at: future,
  deduplicate_token: false,
};
const reactor = {
  name: "fuzz reactor",
  configuration: { region: "eu" },
  application: { id: "<applicationId>" },
};
const proxy = { ...reactor, name: "fuzz proxy", destination_url: "<destinationUrl>", require_auth: true };
const fullProxy = { ...proxy, request_transform: transform, response_transform: transform };

const examples: Record<string, unknown> = {
  advanceTestClock: { advance_seconds: 1 },
  createTenant: {
    name: "fuzz tenant",
    owner: { email: "owner@example.com", first_name: "F", last_name: "Z" },
  },
  createApplication: { ...application, type: "private", create_key: true },
  updateApplication: application,
  createToken: { id: "fuzz-token-id", type: "card", data: card(CARDS.example), ...presentation },
  // No data: a patch of the mask alone is what must not reveal the stored data to a key without reveal.
  patchToken: { ...presentation, metadata: { origin: null, other: "x" }, deduplicate_token: null },
  authorizeSession: { nonce: "<nonce>", permissions, rules: [rule], expires_at: future },
  createInvitation: { email: "invitee@example.com" },
  acceptInvitation: { code: "fuzz-no-such-code", first_name: "F", last_name: "Z" },
  createProxy: fullProxy,
  replaceProxy: fullProxy,
  patchProxy: { ...proxy, request_transform: null, require_auth: false },
  createFormula: formula,
  replaceFormula: formula,
  createReactor: { ...reactor, formula: { id: "<formulaId>" } },
  replaceReactor: reactor,
  patchReactor: reactor,
  react: { args: { card: { number: "{{ <tokenId> }}" }, amount: 5 }, callback_url: "<destinationUrl>" },
};

/** The body of a proxied request: detokenization expressions, one of another tenant's token. */
const proxied = {
  number: "{{ <tokenId> }}",
  last4: "{{ token: <tokenId> | json }}",
  other: "{{ <otherTokenId> }}",
};

/** The example of a route: by operation id, the proxied body for every /proxy route. */
export function exampleFor(route: { operationId: string; group: string }): unknown {
  return route.group === "proxy" ? proxied : examples[route.operationId];
}
