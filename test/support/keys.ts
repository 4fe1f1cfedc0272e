import { expect } from "vitest";
import type { Client } from "./http.ts";

/** A rewrap job as GET /tenants/self/keys/rewrap/{id} answers it. */
export interface RewrapJob {
  id: string;
  status: string;
  total: number;
  done: number;
  skipped: number;
}

/** Starts a rewrap with the management key `mgt` and polls it until it is no longer running: its last state. */
export async function rewrapToEnd(api: Client, mgt: string): Promise<RewrapJob> {
  const started = await api.post<RewrapJob>("/tenants/self/keys/rewrap", { key: mgt });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body.status).toBe("running");
  for (let i = 0; i < 600; i++) {
    const job = await api.get<RewrapJob>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt });
    expect(job.status).toBe(200);
    if (job.body.status !== "running") return job.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the rewrap did not finish");
}
