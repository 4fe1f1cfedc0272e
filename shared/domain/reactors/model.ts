import type { RequestParameter } from "./args.ts";

export type ConfigurationType = "string" | "number" | "boolean";

export interface StoredFormula {
  id: string;
  tenant_id: string;
  name: string;
  description?: string;
  type: "private";
  code: string;
  configuration: { name: string; type: ConfigurationType; description?: string }[];
  request_parameters: RequestParameter[];
  /** Where the code's `fetch` may go (docs/reactors.md); absent: anywhere the address rule allows. */
  allowed_hosts?: string[];
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

export interface StoredReactor {
  id: string;
  tenant_id: string;
  name: string;
  formula_id: string;
  configuration: Record<string, unknown>;
  application_id?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}
