import net from "node:net";
import { EgressError } from "#shared/ports/egress.ts";
import { isLocalName } from "./address-guard.ts";
import { invalid, SELF_DESTINATION } from "./errors.ts";
import { joinPath } from "./request-path.ts";
import { parseSelfHosts, stripDot } from "./self-hosts.ts";

/** Where and how a request is sent, checked against the destination rules and this service itself. */
export interface Target {
  url: URL & { protocol: "http:" | "https:" };
  /** For the socket: IPv6 without brackets. */
  hostname: string;
  port: number;
  /** Request target: destination path + suffix + query, exactly as sent. */
  path: string;
  /** The port is this service's and the name is not an IP literal: refuse local addresses after lookup. */
  guardLookup: boolean;
}

export function resolveTarget(
  request: { destinationUrl: string; pathSuffix: string; rawQuery: string },
  options: { allowPrivate: boolean; requireHttps: boolean; selfHosts?: string[] },
): Target {
  let url: URL;
  try {
    url = new URL(request.destinationUrl);
  } catch {
    throw invalid("The destination_url is not an absolute URL.");
  }
  if (!isHttpUrl(url)) throw invalid("The destination_url must use http or https.");
  if (url.username || url.password) throw invalid("The destination_url must not carry credentials.");
  if (options.requireHttps && url.protocol !== "https:")
    throw new EgressError(403, "forbidden_destination", "The destination_url must use https.");

  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const self = parseSelfHosts(options.selfHosts ?? []);
  const name = stripDot(url.hostname);
  if (self.some((entry) => entry.hostname === name && (entry.port === undefined || entry.port === port)))
    throw invalid(SELF_DESTINATION);
  // An entry without a port stands for the default ports here: local mode always names its port.
  const selfPort = self.some((entry) =>
    entry.port === undefined ? port === 80 || port === 443 : entry.port === port,
  );
  if (options.allowPrivate && selfPort && isLocalName(hostname)) throw invalid(SELF_DESTINATION);

  return {
    url,
    hostname,
    port,
    path: joinPath(url, request.pathSuffix, request.rawQuery),
    guardLookup: options.allowPrivate && selfPort && net.isIP(hostname) === 0,
  };
}

function isHttpUrl(url: URL): url is URL & { protocol: "http:" | "https:" } {
  return url.protocol === "http:" || url.protocol === "https:";
}
