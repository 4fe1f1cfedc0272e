/**
 * The egress port: every outbound HTTP request the service makes for a tenant (a proxy's destination, a
 * reaction's callback). The adapter (shared/egress/) checks every address at connect time, pools connections
 * per tenant and answers failures as EgressErrors whose messages are safe to show.
 */

export interface OutboundRequest {
  /** Whose request this is: connections are reused within one tenant only. */
  tenantId: string;
  /** The proxy's destination_url, or the callback URL. */
  destinationUrl: string;
  /** What followed /proxy in the incoming path, still percent-encoded: "" or "/a/b". */
  pathSuffix: string;
  /** The incoming raw query string without the leading "?", already stripped of svc-proxy-key. */
  rawQuery: string;
  /** GET, POST, PUT, PATCH or DELETE. */
  method: string;
  /** Headers (names lower-cased); the service's own and hop-by-hop ones are dropped before sending. */
  headers: Record<string, string>;
  /** Already detokenized/transformed bytes; undefined for none. */
  body?: Buffer;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** A forward's whole exchange unless its caller says less. */
export const FORWARD_TIMEOUT_MS = 25_000;

export interface EgressOptions {
  /** SVC_PROXY_ALLOW_PRIVATE: reach loopback/private addresses (local mode). */
  allowPrivate: boolean;
  /** Only https destinations (AWS mode). */
  requireHttps: boolean;
  /** Whole exchange, connect to last body byte. Default FORWARD_TIMEOUT_MS. */
  timeoutMs?: number;
  /**
   * host[:port] of this service: the proxy never calls itself. An entry without a port matches that host on
   * any port. With allowPrivate, a loopback/local destination on one of these ports (80 and 443 for an entry
   * without a port) is refused too, also when a name only resolves to such an address.
   */
  selfHosts?: string[];
  /** Default 10 MB. */
  maxResponseBytes?: number;
}

export type EgressErrorCode =
  | "invalid_destination"
  | "forbidden_destination"
  | "timeout"
  | "unreachable"
  | "response_too_large";

/** status 4xx: the caller's fault; 502/504: the destination could not be used. Messages are safe to show. */
export class EgressError extends Error {
  constructor(
    readonly status: number,
    readonly code: EgressErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EgressError";
  }
}

export interface Egress {
  /** Sends `request` and answers the destination's raw response; rejects with an EgressError. */
  forward(request: OutboundRequest, options: EgressOptions): Promise<OutboundResponse>;
  /**
   * Whether the connect-time rule refuses this host whatever the settings (an IP literal that is link-local,
   * metadata, or one of the service's own endpoints): a URL that could never be delivered to.
   */
  refusesAlways(hostname: string, port: number): boolean;
}
