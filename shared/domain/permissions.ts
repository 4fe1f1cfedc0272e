/** Every permission the service knows, grouped by which application type may hold it. */
export const TOKEN_PERMISSIONS = [
  "token:create",
  "token:read",
  "token:update",
  "token:delete",
  "token:use",
  "token:search",
] as const;

export const MANAGEMENT_PERMISSIONS = [
  "application:create",
  "application:read",
  "application:update",
  "application:delete",
  "tenant:read",
  "tenant:delete",
  "tenant:key:read",
  "tenant:key:update",
  "log:read",
  "proxy:create",
  "proxy:read",
  "proxy:update",
  "proxy:delete",
  "reactor:create",
  "reactor:read",
  "reactor:update",
  "reactor:delete",
  "tenant:member:read",
  "tenant:member:delete",
  "tenant:invitation:create",
  "tenant:invitation:read",
  "tenant:invitation:update",
  "tenant:invitation:delete",
] as const;

export const ALL_PERMISSIONS = [...TOKEN_PERMISSIONS, ...MANAGEMENT_PERMISSIONS] as const;

export type TokenPermission = (typeof TOKEN_PERMISSIONS)[number];
export type Permission = (typeof ALL_PERMISSIONS)[number];

export const APPLICATION_TYPES = ["public", "private", "management"] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

/** Which type may hold what: public creates and updates tokens (what a browser holds), private does every token:* thing. */
export const ALLOWED_PERMISSIONS: Record<ApplicationType, readonly Permission[]> = {
  public: ["token:create", "token:update"],
  private: TOKEN_PERMISSIONS,
  management: MANAGEMENT_PERMISSIONS,
};

export function isPermission(value: string): value is Permission {
  return (ALL_PERMISSIONS as readonly string[]).includes(value);
}

export function isTokenPermission(value: string): value is TokenPermission {
  return (TOKEN_PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions of `requested` that an application of `type` may not hold. */
export function disallowedPermissions(type: ApplicationType, requested: readonly string[]): string[] {
  const allowed = ALLOWED_PERMISSIONS[type] as readonly string[];
  return requested.filter((p) => !allowed.includes(p));
}
