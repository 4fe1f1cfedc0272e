import { createHash } from "node:crypto";
import { Stack, Token } from "aws-cdk-lib";
import type { IConstruct } from "constructs";

/**
 * The construct's path inside its stack, without "Default" ids: CDK leaves those out of logical IDs too, so a
 * construct moved under a child with id "Default" (VaultStack wraps TokenizationVault that way) keeps its
 * logical IDs and, through this, every name derived here.
 */
export function pathInStack(construct: IConstruct): string {
  const stack = Stack.of(construct);
  return construct.node.scopes
    .slice(construct.node.scopes.indexOf(stack) + 1)
    .map((scope) => scope.node.id)
    .filter((id) => id !== "Default")
    .join("/");
}

/** The construct's whole path (stages and stack included), without "Default" ids, as pathInStack. */
export function stablePath(construct: IConstruct): string {
  return construct.node.path
    .split("/")
    .filter((id) => id !== "Default")
    .join("/");
}

/**
 * A name unique per account and region for the construct: the stack's name (unique there), its path in the
 * stack, and a hash of both (so "A-B" + "C" and "A" + "B-C" differ), at most `maxLength` characters of
 * letters, digits and hyphens. Two vaults in one account, in two stacks or two places of one stack, get two names.
 */
export function deploymentName(construct: IConstruct, maxLength = 40): string {
  const stack = Stack.of(construct);
  if (Token.isUnresolved(stack.stackName)) throw new Error("The stack name must be known at synthesis");
  const path = pathInStack(construct);
  const hash = createHash("sha256").update(`${stack.stackName}/${path}`).digest("hex").slice(0, 6);
  const readable = [stack.stackName, ...path.split("/")]
    .map((part) => part.replace(/[^A-Za-z0-9-]/g, ""))
    .filter(Boolean)
    .join("-");
  return `${readable.slice(0, maxLength - hash.length - 1)}-${hash}`;
}
