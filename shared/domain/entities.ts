import type { AccessRule } from "./access-rules.ts";
import type { ApplicationType, Permission } from "./permissions.ts";

export interface Tenant {
  id: string;
  name: string;
  owner_id: string;
  created_at: string;
  modified_at?: string;
}

export interface User {
  id: string;
  email?: string;
  first_name?: string;
  last_name?: string;
}

export interface TenantMember {
  id: string;
  tenant_id: string;
  role: "OWNER" | "ADMIN";
  user: User;
  created_at: string;
  created_by?: string;
}

export interface Application {
  id: string;
  tenant_id: string;
  name: string;
  type: ApplicationType;
  permissions: Permission[];
  rules: AccessRule[];
  /** Web origins whose pages may call the browser routes with this application's keys (CORS, Elements). */
  allowed_origins?: string[];
  /** Set on a member's own management application: deleting the member deletes it and its keys. */
  member_id?: string;
  /** The member through whose keys this application was created (directly or transitively): see grant-ceiling.ts. */
  minted_by?: string;
  /**
   * The non-member application whose key created this application (grant-ceiling.ts mintingApplicationOf): its
   * keys answer only while that application (and the one it was created through, and so on) exists.
   */
  created_through?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** An API key as listed: never the key itself, which is shown once and stored only as a hash. */
export interface ApplicationKey {
  id: string;
  application_id: string;
  created_at: string;
  /** The member through whose credentials the key was minted (never answered: answers name their fields). */
  minted_by?: string;
  /** The non-member application whose key minted this key: it answers only while that application exists. */
  minted_through?: string;
  /**
   * The applications the minting key itself answered through (its own minted_through and minted_chain): a key
   * minted by a key the leaked one minted on another application dies with the leaked key's application too.
   */
  minted_chain?: string[];
}

/** What a session may do once a private application authorized it (never more than that application). */
export interface SessionGrant {
  id: string;
  authorized: boolean;
  permissions: Permission[];
  rules: AccessRule[];
  expires_at: string;
  /** A sandbox run's `svc` key (StoredSession.service): no browser holds it. */
  service?: true;
}

/** Who is calling, resolved from SVC-API-KEY. */
export type Principal =
  | { kind: "root" }
  | {
      kind: "application";
      tenantId: string;
      keyId: string;
      application: Application;
      /** The non-member applications this key was minted through (its minted_through, then its minted_chain). */
      mintedThrough?: string[];
      /** The member whose credentials minted this key (its minted_by): what it mints is that member's too. */
      mintedBy?: string;
    }
  | {
      kind: "session";
      tenantId: string;
      keyId: string;
      /** The application that authorized the session (before authorization: the one that created it). */
      application: Application;
      session: SessionGrant;
      /** The key of `application` that authorized the session, when a key did (not for service sessions). */
      authorizedKeyId?: string;
      /** The application that created the session: its `allowed_origins` are where the session's page may be. */
      creator: Pick<Application, "id" | "allowed_origins">;
    };

export type TenantPrincipal = Extract<Principal, { kind: "application" | "session" }>;
