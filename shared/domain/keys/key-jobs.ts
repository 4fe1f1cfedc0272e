import type { KeyCustodyDeps } from "#shared/domain/key-custody.ts";
import { moveKeysUnderCustomerKey } from "#shared/domain/key-custody.ts";
import type { KeyJobMessage } from "#shared/ports/key-versions.ts";
import { processRewrapPage, type RewrapDeps } from "./rewrap.ts";

export type KeyJobDeps = RewrapDeps & Pick<KeyCustodyDeps, "custody" | "customerKeys">;

/** One message of the rewrap queue, in the rewrap worker: a rewrap job's page, or a tenant's keys moved under its own. */
export async function processKeyJob(deps: KeyJobDeps, message: KeyJobMessage): Promise<void> {
  if (message.kind === "custody") await moveKeysUnderCustomerKey(deps, message.tenantId, message.keyArn);
  else await processRewrapPage(deps, message);
}
