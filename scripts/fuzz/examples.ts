/**
 * A valid body per write route, by operation id: the fuzz mutates these field by field, so that hostile
 * values get past the shape checks a wholly random body never would (a route missing here gets generic
 * hostile bodies only). `<name>` is a batch fixture, filled in when sent (world.ts); `<unique>` differs each time.
 */
export const card = (number: string) => ({ number, expiration_month: 12, expiration_year: 2030 });
const exampleCard = card("4000056655665556"); // no fixture token holds it
const permissions = ["token:read"];
const condition = { attribute: "id", operator: "starts_with", value: "tok" };
// A session's rule has exactly one of container or conditions; an application's, a container only.
const rule = { description: "r", priority: 1, conditions: [condition], transform: "mask", permissions };
const appRule = { description: "r", priority: 1, container: "/fuzz/", transform: "mask", permissions };
const application = { name: "fuzz app", permissions, rules: [appRule] };
const future = "2099-01-01T00:00:00Z";
const soon = new Date(Date.now() + 3_600_000).toISOString();
const code = "module.exports = async function (req) { return { raw: req.args }; };";
const region = { name: "region", type: "string", description: "r" };
const parameter = { name: "card.number", type: "string", description: "n", optional: false };
const formula = { name: "f", description: "d", type: "private", code, configuration: [region] };
const transform = { code: "module.exports = async function (req) { return req; };" };
/** How a token is presented and found: what a caller without reveal must not turn into a disclosure. */
const mask = { number: "{{ data.number | reveal_last: 4 }}" };
const found = { search_indexes: ["{{ data.number | last4 }}"], fingerprint_expression: "{{ data.number }}" };
const metadata = { origin: "fuzz" };
const presentation = { mask, containers: ["/fuzz/"], metadata, ...found, expires_at: future };
const token = { id: "fuzz-token-id", type: "card", data: exampleCard, deduplicate_token: false };
const reactor = { name: "r", configuration: { region: "eu" }, application: { id: "<applicationId>" } };
const proxy = { ...reactor, name: "fuzz proxy", destination_url: "<destinationUrl>", require_auth: true };
const fullProxy = { ...proxy, request_transform: transform, response_transform: transform };
const person = { first_name: "F", last_name: "Z" };
/** A reaction's args: the formula's request parameter `card.number`, a string, from a fixture token. */
const args = { card: { number: "{{ <tokenId> | json: '$.number' }}" } };

export const examples: Record<string, unknown> = {
  advanceTestClock: { advance_seconds: 1 },
  setSelfTenantKmsKey: { key_arn: "<kmsKeyArn>" },
  createTenant: { name: "fuzz tenant", owner: { email: "owner@example.com", ...person } },
  createApplication: { ...application, type: "private", create_key: true },
  updateApplication: application,
  createToken: { ...token, ...presentation },
  tokenize: { card: { type: "card", data: exampleCard, ...presentation }, name: "fuzz", none: null },
  detokenize: { number: "{{ <tokenId> }}", other: "{{ <otherTokenId> }}" },
  searchTokens: { query: "data:4242", size: 5 },
  // No data: a patch of the mask alone is what must not reveal the stored data to a key without reveal.
  patchToken: { ...presentation, metadata: { origin: null, other: "x" }, deduplicate_token: null },
  authorizeSession: { nonce: "<nonce>", permissions, rules: [rule], expires_at: soon }, // at most 24 h away
  createInvitation: { email: "invitee-<unique>@example.com" },
  acceptInvitation: { code: "<invitationCode>", ...person },
  createProxy: fullProxy,
  replaceProxy: fullProxy,
  patchProxy: { ...proxy, request_transform: null, require_auth: false },
  createFormula: { ...formula, request_parameters: [parameter] },
  replaceFormula: { ...formula, request_parameters: [parameter] },
  createReactor: { ...reactor, formula: { id: "<formulaId>" } },
  replaceReactor: reactor,
  patchReactor: reactor,
  react: { args, callback_url: "<destinationUrl>" },
  reactAsync: { args },
};
/** The body of a proxied request: detokenization expressions, one of another tenant's token. */
const proxiedOwn = { number: "{{ <tokenId> }}", last4: "{{ token: <tokenId> | json }}" };
const proxied = { ...proxiedOwn, other: "{{ <otherTokenId> }}" };
/** The example of a route: by operation id, the proxied body for every /proxy route. */
export function exampleFor(route: { operationId: string; group: string }): unknown {
  return route.group === "proxy" ? proxied : examples[route.operationId];
}
