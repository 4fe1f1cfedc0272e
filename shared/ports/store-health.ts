/** Whether the store answers at all (GET /healthz): any answer counts, even a refusal; silence does not. */
export interface StoreProbe {
  reachable(): Promise<boolean>;
}
