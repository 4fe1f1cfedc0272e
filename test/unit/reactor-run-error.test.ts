import { describe, expect, it } from "vitest";
import { readableMessage } from "#shared/domain/code-messages.ts";
import { reactorFailure } from "#shared/domain/reactors/run-error.ts";
import { httpErrorOf, problemFromError } from "#shared/http/problem.ts";

/** The problem the caller gets: the run's failure through the one error mapping. */
const answer = (error: Parameters<typeof reactorFailure>[0]) => {
  const failure = httpErrorOf(reactorFailure(error, 1000));
  if (!failure) throw new Error("a run's failure is always a domain error");
  return problemFromError(failure);
};

describe("what a failed reactor run answers", () => {
  it("answers an error without a status as 500 with its message in errors.error", () => {
    expect(answer({ kind: "thrown", name: "TypeError", message: "x is not a function" })).toMatchObject({
      status: 500,
      title: "Reactor Runtime Error",
      detail: "x is not a function",
      errors: { error: ["x is not a function"] },
    });
  });

  it("keeps a typed error's status, name and field messages", () => {
    expect(
      answer({
        kind: "thrown",
        name: "InvalidPaymentMethodError",
        message: "Invalid Payment Method",
        status: 402,
        errors: { decline_code: ["card_declined"] },
      }),
    ).toMatchObject({
      status: 402,
      title: "InvalidPaymentMethodError",
      errors: { decline_code: ["card_declined"] },
    });
  });

  it("answers a status outside 400–599 as an unhandled error, and a custom response's own status and body", () => {
    expect(answer({ kind: "thrown", name: "Error", message: "odd", status: 302 }).status).toBe(500);
    const custom = reactorFailure(
      { kind: "thrown", name: "CustomHttpResponseError", message: "", status: 418, body: { tea: 1 } },
      1000,
    ) as unknown as { status: number; customBody?: unknown };
    expect(custom.status).toBe(418);
    expect(custom.customBody).toEqual({ tea: 1 });
  });

  it("answers the sandbox's own failures with its fixed message, a timeout as 504 and code that cannot run as 422", () => {
    expect(answer({ kind: "memory", message: "the code exceeded the sandbox memory limit" })).toMatchObject({
      status: 500,
      errors: { error: ["the code exceeded the sandbox memory limit"] },
    });
    expect(answer({ kind: "timeout", message: "" }).status).toBe(504);
    expect(answer({ kind: "invalid-code", message: "SyntaxError: x" }).status).toBe(422);
  });
});

describe("a message of tenant code, made readable", () => {
  it("takes host paths out and leaves URLs and API paths alone", () => {
    expect(readableMessage("ENOENT: open '/var/task/secret.json'")).toBe("ENOENT: open '<path>'");
    expect(readableMessage("at file:///work/wt/x/child.mjs:10:5")).toBe("at <path>");
    expect(readableMessage("POST /v1/charges failed at https://api.partner.example/v1/charges")).toBe(
      "POST /v1/charges failed at https://api.partner.example/v1/charges",
    );
  });

  it("caps a message at 1,000 characters", () => {
    expect(readableMessage("x".repeat(5000))).toHaveLength(1000);
  });
});
