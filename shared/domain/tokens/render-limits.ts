/**
 * The limits of expression render time (render-budget.ts). Their own module, without imports: the
 * configuration reads the defaults, and every function loads the configuration.
 */
export interface RenderLimits {
  /** Longest one render may take. */
  renderMs: number;
  /** All the renders of one request together. */
  requestMs: number;
  /** A tenant's sustained share: render milliseconds per second of the clock, per process. 0: no share kept. */
  tenantMsPerSecond: number;
  /** Render milliseconds a tenant may spend at once (the share's bucket). */
  tenantBurstMs: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  renderMs: 100,
  requestMs: 200,
  tenantMsPerSecond: 500,
  tenantBurstMs: 2000,
};
