/**
 * The shared request budget of rate-limit buckets: one counter per bucket and window, kept where every
 * process of the deployment sees it (a DynamoDB item), so the limit holds across warm Lambda instances.
 */
export interface RequestBudget {
  /**
   * Takes up to `wanted` requests from `bucket`'s counter for window `window`, which may reach `capacity`
   * and no more. Answers how many were granted: `wanted`, fewer when the window is nearly spent, 0 when spent.
   * `expiresAt`: when the counter is no longer needed (the window's end, plus a margin).
   */
  lease(request: BudgetLease): Promise<number>;
}

export interface BudgetLease {
  bucket: string;
  window: number;
  wanted: number;
  capacity: number;
  expiresAt: Date;
}
