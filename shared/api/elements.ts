import * as z from "zod";
import { routeGroup } from "./group.ts";

/**
 * Elements (docs/elements.md): the browser library and the frame page its inputs live in, served from the
 * vault's origin. Served by the sessions function: the frame page's CSP is built from the key's application
 * (a table read), and sessions are what browsers hold.
 */
export const elementsRoutes = routeGroup("sessions", {
  elementsScript: {
    method: "GET",
    path: "/elements/v1/elements.js",
    auth: "none",
    summary: "The Elements browser library (global SvcElements); see docs/elements.md",
    responses: {
      200: { description: "JavaScript (cacheable; an SRI hash per release is in docs/elements.md)" },
    },
  },
  elementsFrameScript: {
    method: "GET",
    path: "/elements/v1/frame.js",
    auth: "none",
    summary: "The script of the Elements frame page",
    responses: { 200: { description: "JavaScript" } },
  },
  elementsFrame: {
    method: "GET",
    path: "/elements/v1/frame.html",
    auth: "none",
    summary:
      "The Elements frame page, embeddable only by the key's application's allowed_origins (CSP frame-ancestors)",
    query: z.object({
      k: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional()
        .describe("SHA-256 (hex) of the public or session key the page initialised Elements with"),
    }),
    ownContentSecurityPolicy: true,
    responses: { 200: { description: "HTML" } },
  },
});
