/** lib/naming.ts: the names a vault derives from where it sits, unique per account and region. */
import { App, Stack } from "aws-cdk-lib";
import { Construct } from "constructs";
import { describe, expect, it } from "vitest";
import { deploymentName, pathInStack, stablePath } from "#lib/naming.ts";

describe("deploymentName", () => {
  it("tells apart stack and path splits that read the same once joined with hyphens", () => {
    const app = new App();
    const a = new Construct(new Stack(app, "A-B"), "C");
    const b = new Construct(new Construct(new Stack(app, "A"), "B"), "C");
    expect(deploymentName(a)).toMatch(/^A-B-C-[0-9a-f]{6}$/);
    expect(deploymentName(b)).toMatch(/^A-B-C-[0-9a-f]{6}$/);
    expect(deploymentName(a)).not.toBe(deploymentName(b));
  });

  it("uses the stack's name, not its id, and stays within the length asked, of characters names allow", () => {
    const app = new App();
    const stack = new Stack(app, "Id", { stackName: "payments-prod" });
    const deep = new Construct(new Construct(stack, "A very long id with spaces & symbols!"), "Vault_01");
    const name = deploymentName(deep, 40);
    expect(name.startsWith("payments-prod-")).toBe(true);
    expect(name.length).toBeLessThanOrEqual(40);
    expect(name).toMatch(/^[A-Za-z0-9-]+$/);
  });

  it("ignores 'Default' ids, as CDK's logical IDs do, so wrapping a construct in one changes no name", () => {
    const app = new App();
    const stack = new Stack(app, "SvcVault");
    const direct = new Construct(stack, "Http");
    const other = new App();
    const wrapped = new Construct(new Construct(new Stack(other, "SvcVault"), "Default"), "Http");
    expect(pathInStack(wrapped)).toBe("Http");
    expect(stablePath(wrapped)).toBe(stablePath(direct));
    expect(deploymentName(wrapped)).toBe(deploymentName(direct));
  });
});
