import { describe, expect, it } from "vitest";
import { assertMayRouteData, routingChanges } from "#shared/domain/data-routing.ts";
import type { Application, TenantPrincipal } from "#shared/domain/entities.ts";

const principalOf = (fields: Partial<Application>): TenantPrincipal => ({
  kind: "application",
  tenantId: "t",
  keyId: "k",
  application: {
    id: "a",
    tenant_id: "t",
    name: "app",
    type: "management",
    permissions: ["proxy:update", "reactor:update"],
    rules: [],
    created_at: "2026-01-01T00:00:00Z",
    ...fields,
  },
});

describe("routingChanges (which fields decide what code sees or where data goes)", () => {
  it("counts every field on create and only real changes on update, as body paths", () => {
    const current = { name: "a", configuration: { b: 1, a: { y: 2, x: 1 } }, formula_id: "f" };

    expect(routingChanges("reactor", current)).toEqual([
      "formula.id",
      "code",
      "configuration",
      "application.id",
    ]);
    // A reactor's own code decides what sees callers' args, as a formula does.
    expect(routingChanges("reactor", { code: "b" }, { code: "a" })).toEqual(["code"]);
    const renamed = { ...current, name: "renamed" };
    expect(routingChanges("reactor", renamed, current)).toEqual([]);
    // Key order and an absent field written as null are no change.
    expect(
      routingChanges(
        "reactor",
        { configuration: { a: { x: 1, y: 2 }, b: 1 }, formula_id: "f", application_id: null },
        current,
      ),
    ).toEqual([]);
    expect(routingChanges("reactor", { ...current, application_id: "app" }, current)).toEqual([
      "application.id",
    ]);
    expect(routingChanges("proxy", { configuration: { to: "x" } }, {})).toEqual(["configuration"]);
    expect(
      routingChanges("reactor_formula", { request_parameters: [] }, { request_parameters: [{}] }),
    ).toEqual(["request_parameters"]);
  });

  it("refuses any key with a ceiling (403 naming the fields) and lets a member's own key through", () => {
    const narrow = principalOf({});
    const member = principalOf({ member_id: "m" });

    expect(() => assertMayRouteData(member, "proxy", { destination_url: "https://x" })).not.toThrow();
    expect(() =>
      assertMayRouteData(narrow, "proxy", { destination_url: "a" }, { destination_url: "a" }),
    ).not.toThrow();
    expect(() => assertMayRouteData(narrow, "proxy", { destination_url: "a" })).toThrow(
      expect.objectContaining({ kind: "forbidden" }),
    );
    expect(() => assertMayRouteData(narrow, "reactor_formula", { code: "b" }, { code: "a" })).toThrow(
      expect.objectContaining({
        kind: "forbidden",
        detail: expect.stringContaining("code of a reactor formula"),
      }),
    );
  });
});
