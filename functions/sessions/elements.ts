import type { Routes } from "#shared/api/index.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import { allowedOriginsOf } from "#shared/domain/origins.ts";
import { elementsAssets } from "#shared/elements/assets.ts";
import { framePage } from "#shared/elements/frame-page.ts";
import type { GroupHandlers, Reply } from "#shared/http/lambda.ts";

type ElementsRoutes = Pick<Routes, "elementsScript" | "elementsFrameScript" | "elementsFrame">;

const script = (code: string, headers: Record<string, string> = {}): Reply => ({
  status: 200,
  raw: {
    statusCode: 200,
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      // Versioned path (v1), rebuilt per release: a short public cache keeps updates quick.
      "cache-control": "public, max-age=300",
      ...headers,
    },
    body: code,
  },
});

/** Elements' routes, served by the sessions function (docs/elements.md). */
export const elementsHandlers: GroupHandlers<
  ElementsRoutes,
  "sessions",
  { authenticator: Pick<Authenticator, "byKeyHash"> }
> = {
  // Loaded by merchants' pages with SRI (`crossorigin="anonymous"` needs a CORS answer); a public file.
  elementsScript: async () =>
    script((await elementsAssets())["elements.js"], {
      "access-control-allow-origin": "*",
      "cross-origin-resource-policy": "cross-origin",
    }),
  elementsFrameScript: async () => script((await elementsAssets())["frame.js"]),
  elementsFrame: async ({ deps, query }) => {
    const principal = query.k ? await deps.authenticator.byKeyHash(query.k) : undefined;
    // Only keys meant for browsers get a frame any page may embed: public applications' keys and sessions.
    const browserKey =
      principal !== undefined &&
      (principal.kind === "session" ||
        (principal.kind === "application" && principal.application.type === "public"));
    const page = framePage(browserKey ? allowedOriginsOf(principal) : []);
    return {
      status: 200,
      raw: {
        statusCode: 200,
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": page.contentSecurityPolicy,
          // The policy follows the application's current origins.
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
          "cross-origin-opener-policy": "same-origin",
        },
        body: page.html,
      },
    };
  },
};
