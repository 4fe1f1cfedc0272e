/**
 * Generated from GET /openapi.json by `npm run client:types` (openapi-typescript); do not edit by hand.
 */


export interface paths {
  "/healthz": {
    /** Readiness probe: 200 while the data store answers and the keys work, else 503 with Retry-After */
    get: operations["healthz"];
  };
  "/openapi.json": {
    /** This API as an OpenAPI 3.1 document */
    get: operations["openapi"];
  };
  "/.well-known/svc-vault/receipt-key": {
    /** The public key that verifies tenant deletion receipts (docs/security.md shows how) */
    get: operations["receiptKey"];
  };
  "/tenants": {
    /** Create a tenant with its owner and a management application (root key) */
    post: operations["createTenant"];
  };
  "/tenants/self": {
    /**
     * The caller's tenant
     * @description Requires tenant:read.
     */
    get: operations["getSelfTenant"];
    /**
     * Delete the caller's tenant for good (the OWNER member's own key): its keys are destroyed at once, every key and session answers 401, its items are purged within the hour
     * @description Requires tenant:delete.
     */
    delete: operations["deleteSelfTenant"];
  };
  "/tenants/self/keys/kms": {
    /**
     * Bring your own KMS key (the OWNER member's own key): checked with a test GenerateDataKey/Decrypt, then every data key of the tenant is re-wrapped under it
     * @description Requires tenant:key:update.
     */
    put: operations["setSelfTenantKmsKey"];
  };
  "/tenants/self/keys": {
    /**
     * The tenant's data-key and HMAC versions, each with how many tokens need it
     * @description Requires tenant:key:read.
     */
    get: operations["listTenantKeys"];
  };
  "/tenants/self/keys/rotate": {
    /**
     * Make a new data-key version and a new HMAC version current
     * @description Requires tenant:key:update.
     */
    post: operations["rotateTenantKeys"];
  };
  "/tenants/self/keys/rewrap": {
    /**
     * Start re-sealing every token under the current key versions (a job, page by page)
     * @description Requires tenant:key:update.
     */
    post: operations["startRewrap"];
  };
  "/tenants/self/keys/rewrap/{id}": {
    /**
     * A rewrap job's progress
     * @description Requires tenant:key:read.
     */
    get: operations["getRewrap"];
  };
  "/tenants/self/keys/{version}": {
    /**
     * Destroy a data-key version no token needs
     * @description Requires tenant:key:update.
     */
    delete: operations["destroyKeyVersion"];
  };
  "/applications": {
    /**
     * List applications
     * @description Requires application:read.
     */
    get: operations["listApplications"];
    /**
     * Create an application (its key is shown once)
     * @description Requires application:create.
     */
    post: operations["createApplication"];
  };
  "/applications/key": {
    /** The application of the calling key */
    get: operations["getOwnApplication"];
  };
  "/applications/{id}": {
    /**
     * Get an application
     * @description Requires application:read.
     */
    get: operations["getApplication"];
    /**
     * Replace an application's name, permissions and rules
     * @description Requires application:update.
     */
    put: operations["updateApplication"];
    /**
     * Delete an application and revoke its keys
     * @description Requires application:delete.
     */
    delete: operations["deleteApplication"];
  };
  "/applications/{id}/keys": {
    /**
     * List an application's keys (ids only)
     * @description Requires application:read.
     */
    get: operations["listApplicationKeys"];
    /**
     * Add a key to an application (shown once)
     * @description Requires application:update.
     */
    post: operations["createApplicationKey"];
  };
  "/applications/{id}/keys/{keyId}": {
    /**
     * Get one key's metadata
     * @description Requires application:read.
     */
    get: operations["getApplicationKey"];
    /**
     * Revoke a key
     * @description Requires application:update.
     */
    delete: operations["deleteApplicationKey"];
  };
  "/logs": {
    /**
     * Search the audit log, newest first
     * @description Requires log:read.
     */
    get: operations["listLogs"];
  };
  "/logs/entity-types": {
    /**
     * The entity types log entries refer to
     * @description Requires log:read.
     */
    get: operations["listEntityTypes"];
  };
  "/tokens": {
    /**
     * List tokens (filters: id, type repeatable; metadata.<key> case-insensitive), newest first
     * @description Requires token:read.
     */
    get: operations["listTokens"];
    /**
     * Tokenize data (answered masked)
     * @description Requires token:create. Browsers may call it from the key's application's allowed_origins (CORS).
     */
    post: operations["createToken"];
  };
  "/tokens/{id}": {
    /**
     * Read a token, transformed by the caller's access rules
     * @description Requires token:read. Browsers may call it from the key's application's allowed_origins (CORS).
     */
    get: operations["getToken"];
    /**
     * Delete a token
     * @description Requires token:delete.
     */
    delete: operations["deleteToken"];
    /**
     * Update a token (RFC 7386 merge patch for data, mask, metadata)
     * @description Requires token:update. Browsers may call it from the key's application's allowed_origins (CORS).
     */
    patch: operations["patchToken"];
  };
  "/tokenize": {
    /**
     * Tokenize many at once (up to 250 token requests; all or nothing), answered in the body's shape
     * @description Requires token:create.
     */
    post: operations["tokenize"];
  };
  "/detokenize": {
    /**
     * Replace token expressions in any JSON by the tokens' data, as the caller's token:read shows it
     * @description Requires token:read.
     */
    post: operations["detokenize"];
  };
  "/v2/tokens": {
    /**
     * List tokens by cursor, newest first (filters: type, container, fingerprint, metadata); no total, each page reads only what it needs
     * @description Requires token:read.
     */
    get: operations["listTokensV2"];
  };
  "/v2/tokens/search": {
    /**
     * Search tokens on blind indexes (data:, fingerprint:, type:, container:, metadata.<key>:), answered as reads, by cursor
     * @description Requires token:search.
     */
    post: operations["searchTokens"];
  };
  "/transactions": {
    /** Open a transaction (beta); token writes join it with SVC-TRANSACTION-ID */
    post: operations["openTransaction"];
  };
  "/transactions/{id}/commit": {
    /** Apply every operation of the transaction at once */
    post: operations["commitTransaction"];
  };
  "/transactions/{id}/rollback": {
    /** Discard every operation of the transaction */
    post: operations["rollbackTransaction"];
  };
  "/sessions": {
    /**
     * Create a session (public key): a key with no access until a private application authorizes it
     * @description Browsers may call it from the key's application's allowed_origins (CORS).
     */
    post: operations["createSession"];
  };
  "/sessions/authorize": {
    /** Authorize a session by its nonce (private key), granting permissions and/or rules */
    post: operations["authorizeSession"];
  };
  "/elements/v1/elements.js": {
    /** The Elements browser library (global SvcElements); see docs/elements.md */
    get: operations["elementsScript"];
  };
  "/elements/v1/frame.js": {
    /** The script of the Elements frame page */
    get: operations["elementsFrameScript"];
  };
  "/elements/v1/frame.html": {
    /** The Elements frame page, embeddable only by the key's application's allowed_origins (CSP frame-ancestors) */
    get: operations["elementsFrame"];
  };
  "/tenants/self/members": {
    /**
     * List the tenant's members (user_id repeatable; size at most 50)
     * @description Requires tenant:member:read.
     */
    get: operations["listMembers"];
  };
  "/tenants/self/members/{id}": {
    /**
     * Delete a member and revoke all of its access (not the OWNER)
     * @description Requires tenant:member:delete.
     */
    delete: operations["deleteMember"];
  };
  "/tenants/self/invitations": {
    /**
     * List invitations (status=PENDING|EXPIRED)
     * @description Requires tenant:invitation:read.
     */
    get: operations["listInvitations"];
    /**
     * Invite someone by e-mail (a single-use acceptance link is sent)
     * @description Requires tenant:invitation:create.
     */
    post: operations["createInvitation"];
  };
  "/tenants/self/invitations/{id}/resend": {
    /**
     * Resend: 72 more hours from now, earlier links invalidated
     * @description Requires tenant:invitation:create, tenant:invitation:update.
     */
    post: operations["resendInvitation"];
  };
  "/tenants/self/invitations/{id}": {
    /**
     * Get an invitation
     * @description Requires tenant:invitation:read.
     */
    get: operations["getInvitation"];
    /**
     * Delete an invitation; its links stop working
     * @description Requires tenant:invitation:delete.
     */
    delete: operations["deleteInvitation"];
  };
  "/invitations/accept": {
    /** The page an invitation link opens: a form that POSTs the code (from the link's fragment) to /invitations/accept */
    get: operations["invitationPage"];
    /** Accept an invitation with the code from its e-mail (no key): an ADMIN member and its management key */
    post: operations["acceptInvitation"];
  };
  "/proxies": {
    /**
     * List proxies (id repeatable; name with * wildcards)
     * @description Requires proxy:read.
     */
    get: operations["listProxies"];
    /**
     * Create a pre-configured proxy (its key is generated)
     * @description Requires proxy:create.
     */
    post: operations["createProxy"];
  };
  "/proxies/{id}": {
    /**
     * Get a proxy
     * @description Requires proxy:read.
     */
    get: operations["getProxy"];
    /**
     * Replace a proxy's fields (its key stays)
     * @description Requires proxy:update.
     */
    put: operations["replaceProxy"];
    /**
     * Delete a proxy (its key stops working)
     * @description Requires proxy:delete.
     */
    delete: operations["deleteProxy"];
    /**
     * Update a proxy (RFC 7386 merge patch)
     * @description Requires proxy:update.
     */
    patch: operations["patchProxy"];
  };
  "/proxies/{id}/key/rotate": {
    /**
     * Give a proxy a new key (the old one stops); a member's own key only, to whom the new key is answered
     * @description Requires proxy:update.
     */
    post: operations["rotateProxyKey"];
  };
  "/proxy": {
    /** Invoke a pre-configured proxy (GET); key in SVC-PROXY-KEY or svc-proxy-key */
    get: operations["invokeProxyGet"];
    /** Invoke a pre-configured proxy (PUT); key in SVC-PROXY-KEY or svc-proxy-key */
    put: operations["invokeProxyPut"];
    /** Invoke a pre-configured proxy (POST); key in SVC-PROXY-KEY or svc-proxy-key */
    post: operations["invokeProxyPost"];
    /** Invoke a pre-configured proxy (DELETE); key in SVC-PROXY-KEY or svc-proxy-key */
    delete: operations["invokeProxyDelete"];
    /** Invoke a pre-configured proxy (PATCH); key in SVC-PROXY-KEY or svc-proxy-key */
    patch: operations["invokeProxyPatch"];
  };
  "/proxy/{proxy}": {
    /** Invoke a pre-configured proxy (GET); key in SVC-PROXY-KEY or svc-proxy-key */
    get: operations["invokeProxyGetPath"];
    /** Invoke a pre-configured proxy (PUT); key in SVC-PROXY-KEY or svc-proxy-key */
    put: operations["invokeProxyPutPath"];
    /** Invoke a pre-configured proxy (POST); key in SVC-PROXY-KEY or svc-proxy-key */
    post: operations["invokeProxyPostPath"];
    /** Invoke a pre-configured proxy (DELETE); key in SVC-PROXY-KEY or svc-proxy-key */
    delete: operations["invokeProxyDeletePath"];
    /** Invoke a pre-configured proxy (PATCH); key in SVC-PROXY-KEY or svc-proxy-key */
    patch: operations["invokeProxyPatchPath"];
  };
  "/reactor-formulas": {
    /**
     * List reactor formulas
     * @description Requires reactor:read.
     */
    get: operations["listFormulas"];
    /**
     * Create a reactor formula (code, configuration and request parameters)
     * @description Requires reactor:create.
     */
    post: operations["createFormula"];
  };
  "/reactor-formulas/{id}": {
    /**
     * Get a reactor formula
     * @description Requires reactor:read.
     */
    get: operations["getFormula"];
    /**
     * Replace a reactor formula
     * @description Requires reactor:update.
     */
    put: operations["replaceFormula"];
    /**
     * Delete a reactor formula no reactor uses
     * @description Requires reactor:delete.
     */
    delete: operations["deleteFormula"];
  };
  "/reactors": {
    /**
     * List reactors (id repeatable; name with * wildcards)
     * @description Requires reactor:read.
     */
    get: operations["listReactors"];
    /**
     * Create a reactor: a formula with its configuration
     * @description Requires reactor:create.
     */
    post: operations["createReactor"];
  };
  "/reactors/{id}": {
    /**
     * Get a reactor
     * @description Requires reactor:read.
     */
    get: operations["getReactor"];
    /**
     * Replace a reactor's name, configuration and application
     * @description Requires reactor:update.
     */
    put: operations["replaceReactor"];
    /**
     * Delete a reactor
     * @description Requires reactor:delete.
     */
    delete: operations["deleteReactor"];
    /**
     * Update a reactor (RFC 7386 merge patch)
     * @description Requires reactor:update.
     */
    patch: operations["patchReactor"];
  };
  "/reactors/{id}/react": {
    /**
     * Invoke a reactor; with callback_url it runs asynchronously (202) and the result is a signed webhook
     * @description Requires token:use.
     */
    post: operations["react"];
  };
  "/reactors/{id}/react-async": {
    /**
     * Invoke a reactor asynchronously; its result is kept 24 h for the caller
     * @description Requires token:use.
     */
    post: operations["reactAsync"];
  };
  "/reactors/{id}/results/{requestId}": {
    /**
     * A react-async result as react would answer it, to its caller only
     * @description Requires token:use.
     */
    get: operations["getReactionResult"];
  };
  "/tenants/self/webhook-secret": {
    /**
     * The tenant's Standard Webhooks secret for reactor callbacks
     * @description Requires reactor:update.
     */
    get: operations["getWebhookSecret"];
  };
  "/tenants/self/webhook-secret/rotate": {
    /**
     * Replace the webhook secret (later callbacks are signed with the new one)
     * @description Requires reactor:update.
     */
    post: operations["rotateWebhookSecret"];
  };
}

export type webhooks = Record<string, never>;

export interface components {
  schemas: {
    Problem: {
      type: string;
      title: string;
      status: number;
      detail: string;
      errors?: {
        [key: string]: string[];
      };
      request_id?: string;
    };
    Tenant: {
      id: string;
      name: string;
      owner_id: string;
      created_at: string;
      modified_at?: string;
    };
    DeletionReceipt: {
      tenant_id: string;
      deleted_at: string;
      destroyed_key_versions: string[];
      purge_deadline: string;
      /** @description base64url; verify as docs/security.md shows, with GET /.well-known/svc-vault/receipt-key */
      signature: string;
    };
    TenantKeys: {
      current: number;
      versions: components["schemas"]["KeyVersion"][];
      hmac: {
        current: number;
        versions: components["schemas"]["KeyVersion"][];
      };
      /** @description Once the tenant brought its own KMS key (PUT /tenants/self/keys/kms): that key, and how many of the tenant's data and HMAC keys are not yet wrapped under it (a move cut short; the same PUT sent again finishes it). Absent while the deployment's key wraps them. */
      custody?: {
        key_arn: string;
        keys_not_moved: number;
      };
    };
    KeyVersion: {
      version: number;
      created_at?: string;
      /** @enum {string} */
      state: "current" | "active" | "destroyed";
      /** @description Tokens that need this version (kept as counters by every token write); null: not counted */
      tokens: number | null;
    };
    RewrapJob: {
      id: string;
      /** @enum {string} */
      status: "running" | "succeeded" | "failed";
      total: number;
      done: number;
      skipped: number;
      created_at: string;
      finished_at?: string;
    };
    Application: {
      id: string;
      tenant_id: string;
      name: string;
      /** @enum {string} */
      type: "public" | "private" | "management";
      permissions: ("token:create" | "token:read" | "token:update" | "token:delete" | "token:use" | "token:search" | "application:create" | "application:read" | "application:update" | "application:delete" | "tenant:read" | "tenant:delete" | "tenant:key:read" | "tenant:key:update" | "log:read" | "proxy:create" | "proxy:read" | "proxy:update" | "proxy:delete" | "reactor:create" | "reactor:read" | "reactor:update" | "reactor:delete" | "tenant:member:read" | "tenant:member:delete" | "tenant:invitation:create" | "tenant:invitation:read" | "tenant:invitation:update" | "tenant:invitation:delete")[];
      rules: components["schemas"]["AccessRule"][];
      /** @description Web origins whose pages may call the browser routes (POST /tokens, GET and PATCH /tokens/{id}, POST /sessions) with this application's keys, and may embed its Elements frames. None: no browser page may. */
      allowed_origins: string[];
      keys?: components["schemas"]["ApplicationKey"][];
      key?: string;
      /** @description Set on a member's own management application. */
      member_id?: string;
      /** @description The member through whose keys the application was created; deleting it revokes their keys. */
      minted_by?: string;
      /** @description The non-member application whose key created this one; deleting it revokes the keys it minted here. */
      created_through?: string;
      created_by?: string;
      created_at: string;
      modified_by?: string;
      modified_at?: string;
    };
    AccessRule: {
      description?: string;
      priority: number;
      container?: string;
      conditions?: ({
          /** @enum {string} */
          attribute: "id" | "container";
          /** @enum {string} */
          operator: "equals" | "starts_with";
          value: string;
        })[];
      /** @enum {string} */
      transform: "redact" | "mask" | "reveal";
      permissions: ("token:create" | "token:read" | "token:update" | "token:delete" | "token:use" | "token:search")[];
    };
    ApplicationKey: {
      id: string;
      key?: string;
      created_at: string;
    };
    Pagination: {
      total_items: number;
      page_number: number;
      page_size: number;
      total_pages: number;
      next?: string;
    };
    Log: {
      id: string;
      tenant_id: string;
      actor_id?: string;
      actor_type?: string;
      entity_type: string;
      entity_id: string;
      operation: string;
      message: string;
      created_at: string;
    };
    EntityType: {
      display_name: string;
      value: string;
    };
    Token: {
      id: string;
      tenant_id: string;
      type: string;
      data?: unknown;
      mask?: unknown;
      /** @description Only when the answer reveals the data (the caller could read the value anyway). */
      fingerprint?: string;
      fingerprint_expression: string;
      containers: string[];
      metadata?: {
        [key: string]: string;
      };
      search_indexes?: string[];
      expires_at?: string;
      created_by?: string;
      created_at: string;
      modified_by?: string;
      modified_at?: string;
    };
    CursorPagination: {
      page_size: number;
      next?: string;
    };
    Transaction: {
      id: string;
      created_at: string;
      created_by?: string;
      expires_at: string;
    };
    SessionCreated: {
      session_key: string;
      nonce: string;
      expires_at: string;
    };
    TenantMember: {
      id: string;
      tenant_id: string;
      /** @enum {string} */
      role: "OWNER" | "ADMIN";
      user: {
        id: string;
        email?: string;
        first_name?: string;
        last_name?: string;
        picture?: string;
      };
      created_by?: string;
      created_at: string;
    };
    TenantInvitation: {
      id: string;
      tenant_id: string;
      email: string;
      /** @enum {string} */
      status: "PENDING" | "EXPIRED";
      expires_at: string;
      created_by?: string;
      created_at: string;
      modified_by?: string;
      modified_at?: string;
    };
    Proxy: {
      id: string;
      key?: string;
      name: string;
      destination_url: string;
      tenant_id: string;
      require_auth: boolean;
      request_transform?: {
        code: string;
      };
      response_transform?: {
        code: string;
      };
      application_id?: string;
      configuration?: {
        [key: string]: unknown;
      };
      allowed_hosts?: string[];
      created_by?: string;
      created_at: string;
      modified_by?: string;
      modified_at?: string;
    };
    ReactorFormula: {
      id: string;
      tenant_id: string;
      name: string;
      description?: string;
      /** @enum {string} */
      type: "private";
      code: string;
      configuration: {
          name: string;
          type: string;
          description?: string;
          optional?: boolean;
        }[];
      request_parameters: {
          name: string;
          type: string;
          description?: string;
          optional?: boolean;
        }[];
      allowed_hosts?: string[];
      created_at: string;
    };
    Reactor: {
      id: string;
      tenant_id: string;
      name: string;
      formula?: {
        id: string;
        tenant_id?: string;
        name?: string;
        description?: string;
        /** @enum {string} */
        type?: "private";
        code?: string;
        configuration?: {
            name: string;
            type: string;
            description?: string;
            optional?: boolean;
          }[];
        request_parameters?: {
            name: string;
            type: string;
            description?: string;
            optional?: boolean;
          }[];
        allowed_hosts?: string[];
        created_at?: string;
      };
      code?: string;
      configuration: {
        [key: string]: unknown;
      };
      application?: {
        id: string;
      };
      created_at: string;
    };
    ReactorResponse: {
      tokens?: unknown;
      raw?: unknown;
    };
    AsyncReactorResponse: {
      asyncReactorRequestId: string;
    };
  };
  responses: never;
  parameters: {
  };
  requestBodies: never;
  headers: never;
  pathItems: never;
}

export type $defs = Record<string, never>;

export type external = Record<string, never>;

export interface operations {

  /** Readiness probe: 200 while the data store answers and the keys work, else 503 with Retry-After */
  healthz: {
    responses: {
      /** @description Ready: every part of the readiness check passed */
      200: {
        content: {
          "application/json": {
            /** @enum {string} */
            status: "ok";
            checks: {
              /** @enum {string} */
              store: "ok";
              /** @enum {string} */
              keys: "ok";
            };
          };
        };
      };
      /** @description Not ready: the data store cannot be reached, or the master key cannot wrap and unwrap a probe data key (each checked with a short timeout, cached about 1 s); `errors` names the parts that failed */
      503: {
        content: never;
      };
    };
  };
  /** This API as an OpenAPI 3.1 document */
  openapi: {
    responses: {
      /** @description OpenAPI document */
      200: {
        content: never;
      };
    };
  };
  /** The public key that verifies tenant deletion receipts (docs/security.md shows how) */
  receiptKey: {
    responses: {
      /** @description The deployment's receipt signing key */
      200: {
        content: {
          "application/json": {
            /** @enum {string} */
            algorithm: "Ed25519" | "ECDSA_P256_SHA256";
            key_id: string;
            public_key_pem: string;
          };
        };
      };
      /** @description The deployment has no receipt signing key */
      503: {
        content: never;
      };
    };
  };
  /** Create a tenant with its owner and a management application (root key) */
  createTenant: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          owner?: {
            /** Format: email */
            email?: string;
            first_name?: string;
            last_name?: string;
          };
        };
      };
    };
    responses: {
      /** @description Created; management_key is shown once */
      201: {
        content: {
          "application/json": {
            id: string;
            name: string;
            owner_id: string;
            created_at: string;
            modified_at?: string;
            management_key: string;
            management_application_id: string;
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * The caller's tenant
   * @description Requires tenant:read.
   */
  getSelfTenant: {
    responses: {
      /** @description Tenant */
      200: {
        content: {
          "application/json": components["schemas"]["Tenant"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete the caller's tenant for good (the OWNER member's own key): its keys are destroyed at once, every key and session answers 401, its items are purged within the hour
   * @description Requires tenant:delete.
   */
  deleteSelfTenant: {
    responses: {
      /** @description The deletion receipt, signed by the deployment */
      200: {
        content: {
          "application/json": components["schemas"]["DeletionReceipt"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The deployment has no receipt signing key: nothing was deleted */
      503: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Bring your own KMS key (the OWNER member's own key): checked with a test GenerateDataKey/Decrypt, then every data key of the tenant is re-wrapped under it
   * @description Requires tenant:key:update.
   */
  setSelfTenantKmsKey: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          key_arn: string;
        };
      };
    };
    responses: {
      /** @description The tenant's data keys are under this key */
      200: {
        content: {
          "application/json": {
            key_arn: string;
            set_at: string;
            data_keys_rewrapped: number;
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * The tenant's data-key and HMAC versions, each with how many tokens need it
   * @description Requires tenant:key:read.
   */
  listTenantKeys: {
    responses: {
      /** @description Key versions */
      200: {
        content: {
          "application/json": components["schemas"]["TenantKeys"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Make a new data-key version and a new HMAC version current
   * @description Requires tenant:key:update.
   */
  rotateTenantKeys: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    responses: {
      /** @description Key versions after the rotation */
      200: {
        content: {
          "application/json": components["schemas"]["TenantKeys"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Another rotation changed the keys meanwhile */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Start re-sealing every token under the current key versions (a job, page by page)
   * @description Requires tenant:key:update.
   */
  startRewrap: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    responses: {
      /** @description The job, running */
      202: {
        content: {
          "application/json": components["schemas"]["RewrapJob"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description A rewrap of the tenant is running (the detail names it); one runs at a time */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * A rewrap job's progress
   * @description Requires tenant:key:read.
   */
  getRewrap: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description The job */
      200: {
        content: {
          "application/json": components["schemas"]["RewrapJob"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Destroy a data-key version no token needs
   * @description Requires tenant:key:update.
   */
  destroyKeyVersion: {
    parameters: {
      path: {
        version: number | null;
      };
    };
    responses: {
      /** @description Destroyed */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The current version, a version tokens, proxy keys or the webhook secret still need, one whose tokens were never counted, or one that stopped being current less than a day ago (the detail says from when) */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List applications
   * @description Requires application:read.
   */
  listApplications: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
      };
    };
    responses: {
      /** @description Page of applications */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["Application"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Create an application (its key is shown once)
   * @description Requires application:create.
   */
  createApplication: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          /** @enum {string} */
          type: "public" | "private" | "management";
          /** @default [] */
          permissions?: ("token:create" | "token:read" | "token:update" | "token:delete" | "token:use" | "token:search" | "application:create" | "application:read" | "application:update" | "application:delete" | "tenant:read" | "tenant:delete" | "tenant:key:read" | "tenant:key:update" | "log:read" | "proxy:create" | "proxy:read" | "proxy:update" | "proxy:delete" | "reactor:create" | "reactor:read" | "reactor:update" | "reactor:delete" | "tenant:member:read" | "tenant:member:delete" | "tenant:invitation:create" | "tenant:invitation:read" | "tenant:invitation:update" | "tenant:invitation:delete")[];
          /** @default [] */
          rules?: components["schemas"]["AccessRule"][];
          /**
           * @description Web origins whose pages may call the browser routes (POST /tokens, GET and PATCH /tokens/{id}, POST /sessions) with this application's keys, and may embed its Elements frames. None: no browser page may.
           * @default []
           */
          allowed_origins?: string[];
          /** @default true */
          create_key?: boolean;
        };
      };
    };
    responses: {
      /** @description Created */
      201: {
        content: {
          "application/json": components["schemas"]["Application"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** The application of the calling key */
  getOwnApplication: {
    responses: {
      /** @description Application. To a key of a public or private application, or a session, without who made or changed it (minted_by, created_through, created_by, modified_by) and without its keys */
      200: {
        content: {
          "application/json": components["schemas"]["Application"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get an application
   * @description Requires application:read.
   */
  getApplication: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Application */
      200: {
        content: {
          "application/json": components["schemas"]["Application"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace an application's name, permissions and rules
   * @description Requires application:update.
   */
  updateApplication: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          /** @default [] */
          permissions?: ("token:create" | "token:read" | "token:update" | "token:delete" | "token:use" | "token:search" | "application:create" | "application:read" | "application:update" | "application:delete" | "tenant:read" | "tenant:delete" | "tenant:key:read" | "tenant:key:update" | "log:read" | "proxy:create" | "proxy:read" | "proxy:update" | "proxy:delete" | "reactor:create" | "reactor:read" | "reactor:update" | "reactor:delete" | "tenant:member:read" | "tenant:member:delete" | "tenant:invitation:create" | "tenant:invitation:read" | "tenant:invitation:update" | "tenant:invitation:delete")[];
          /** @default [] */
          rules?: components["schemas"]["AccessRule"][];
          /**
           * @description Web origins whose pages may call the browser routes (POST /tokens, GET and PATCH /tokens/{id}, POST /sessions) with this application's keys, and may embed its Elements frames. None: no browser page may.
           * @default []
           */
          allowed_origins?: string[];
        };
      };
    };
    responses: {
      /** @description Application */
      200: {
        content: {
          "application/json": components["schemas"]["Application"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete an application and revoke its keys
   * @description Requires application:delete.
   */
  deleteApplication: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List an application's keys (ids only)
   * @description Requires application:read.
   */
  listApplicationKeys: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Keys */
      200: {
        content: {
          "application/json": components["schemas"]["ApplicationKey"][];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Add a key to an application (shown once)
   * @description Requires application:update.
   */
  createApplicationKey: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Created */
      201: {
        content: {
          "application/json": components["schemas"]["ApplicationKey"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Other keys of this application are being added at the same moment; retry */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get one key's metadata
   * @description Requires application:read.
   */
  getApplicationKey: {
    parameters: {
      path: {
        id: string;
        keyId: string;
      };
    };
    responses: {
      /** @description Key */
      200: {
        content: {
          "application/json": components["schemas"]["ApplicationKey"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Revoke a key
   * @description Requires application:update.
   */
  deleteApplicationKey: {
    parameters: {
      path: {
        id: string;
        keyId: string;
      };
    };
    responses: {
      /** @description Revoked */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Search the audit log, newest first
   * @description Requires log:read.
   */
  listLogs: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        entity_type?: string;
        entity_id?: string;
        start_date?: string;
        end_date?: string;
      };
    };
    responses: {
      /** @description Page of log entries */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["Log"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * The entity types log entries refer to
   * @description Requires log:read.
   */
  listEntityTypes: {
    responses: {
      /** @description Entity types */
      200: {
        content: {
          "application/json": components["schemas"]["EntityType"][];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List tokens (filters: id, type repeatable; metadata.<key> case-insensitive), newest first
   * @description Requires token:read.
   */
  listTokens: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        id?: string[];
        type?: string[];
        /** @description `metadata.<key>=value`: tokens whose metadata has that key and value (case-insensitive); repeat for more keys. */
        metadata?: {
          [key: string]: string;
        };
      };
    };
    responses: {
      /** @description Page of tokens */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["Token"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Tokenize data (answered masked)
   * @description Requires token:create. Browsers may call it from the key's application's allowed_origins (CORS).
   */
  createToken: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
        /** @description Joins the write to an open transaction (POST /transactions, beta). */
        "SVC-TRANSACTION-ID"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          id?: string;
          /** @enum {string} */
          type: "token" | "card" | "card_number" | "bank" | "us_bank_account_number" | "us_bank_routing_number" | "social_security_number" | "employer_id_number";
          data: unknown;
          mask?: unknown;
          containers?: string[];
          metadata?: {
            [key: string]: string;
          };
          search_indexes?: string[];
          fingerprint_expression?: string;
          deduplicate_token?: boolean;
          expires_at?: string;
        };
      };
    };
    responses: {
      /** @description Created, or the existing token when deduplicated */
      201: {
        content: {
          "application/json": components["schemas"]["Token"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission, or the request's Origin is not one of its application's allowed_origins */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The id is taken */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Read a token, transformed by the caller's access rules
   * @description Requires token:read. Browsers may call it from the key's application's allowed_origins (CORS).
   */
  getToken: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Token */
      200: {
        content: {
          "application/json": components["schemas"]["Token"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission, or the request's Origin is not one of its application's allowed_origins */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found or expired */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete a token
   * @description Requires token:delete.
   */
  deleteToken: {
    parameters: {
      header?: {
        /** @description Joins the write to an open transaction (POST /transactions, beta). */
        "SVC-TRANSACTION-ID"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found or expired */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Update a token (RFC 7386 merge patch for data, mask, metadata)
   * @description Requires token:update. Browsers may call it from the key's application's allowed_origins (CORS).
   */
  patchToken: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
        /** @description Joins the write to an open transaction (POST /transactions, beta). */
        "SVC-TRANSACTION-ID"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/merge-patch+json": {
          data?: unknown;
          mask?: unknown;
          metadata?: ({
            [key: string]: string | null;
          }) | null;
          containers?: string[];
          search_indexes?: string[] | null;
          fingerprint_expression?: string | null;
          deduplicate_token?: boolean | null;
          expires_at?: string | null;
        };
      };
    };
    responses: {
      /** @description Updated token */
      200: {
        content: {
          "application/json": components["schemas"]["Token"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission, or the request's Origin is not one of its application's allowed_origins */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found or expired */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not application/merge-patch+json */
      415: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Tokenize many at once (up to 250 token requests; all or nothing), answered in the body's shape
   * @description Requires token:create.
   */
  tokenize: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": ({
          id?: string;
          /** @enum {string} */
          type: "token" | "card" | "card_number" | "bank" | "us_bank_account_number" | "us_bank_routing_number" | "social_security_number" | "employer_id_number";
          data: unknown;
          mask?: unknown;
          containers?: string[];
          metadata?: {
            [key: string]: string;
          };
          search_indexes?: string[];
          fingerprint_expression?: string;
          deduplicate_token?: boolean;
          expires_at?: string;
        }) | unknown[] | {
          [key: string]: unknown;
        };
      };
    };
    responses: {
      /** @description Every token created (or found by deduplication) */
      201: {
        content: {
          "application/json": unknown;
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description An id is taken, or a deduplicated token the key may not read; nothing was stored */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace token expressions in any JSON by the tokens' data, as the caller's token:read shows it
   * @description Requires token:read.
   */
  detokenize: {
    requestBody: {
      content: {
        "application/json": unknown;
      };
    };
    responses: {
      /** @description The body, expressions replaced */
      200: {
        content: {
          "application/json": unknown;
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List tokens by cursor, newest first (filters: type, container, fingerprint, metadata); no total, each page reads only what it needs
   * @description Requires token:read.
   */
  listTokensV2: {
    parameters: {
      query?: {
        size?: number;
        start?: string;
        type?: string[];
        container?: string;
        fingerprint?: string;
        /** @description A JSON object of metadata to match, e.g. {"customer":"c-1"} (case-insensitive). */
        metadata?: string;
      };
    };
    responses: {
      /** @description A page of tokens; pagination.next is the next page's start */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["CursorPagination"];
            data: components["schemas"]["Token"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Search tokens on blind indexes (data:, fingerprint:, type:, container:, metadata.<key>:), answered as reads, by cursor
   * @description Requires token:search.
   */
  searchTokens: {
    requestBody: {
      content: {
        "application/json": {
          /** @description One term — data:<value> (equal to one of a token's search_indexes), fingerprint:, type:, container:, metadata.<key>: — optionally "AND container:<container>"; quote values holding spaces. */
          query: string;
          /** @default 20 */
          size?: number;
          start?: string;
        };
      };
    };
    responses: {
      /** @description A page of matching tokens the key may read; pagination.next is the next page's start */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["CursorPagination"];
            data: components["schemas"]["Token"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** Open a transaction (beta); token writes join it with SVC-TRANSACTION-ID */
  openTransaction: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    responses: {
      /** @description Open transaction */
      201: {
        content: {
          "application/json": components["schemas"]["Transaction"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** Apply every operation of the transaction at once */
  commitTransaction: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Committed (empty body) */
      200: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Unknown or finished */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** Discard every operation of the transaction */
  rollbackTransaction: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Rolled back (empty body) */
      200: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Unknown or finished */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Create a session (public key): a key with no access until a private application authorizes it
   * @description Browsers may call it from the key's application's allowed_origins (CORS).
   */
  createSession: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    responses: {
      /** @description Session key and its one-time nonce */
      201: {
        content: {
          "application/json": components["schemas"]["SessionCreated"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission, or the request's Origin is not one of its application's allowed_origins */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** Authorize a session by its nonce (private key), granting permissions and/or rules */
  authorizeSession: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          nonce: string;
          /** @default [] */
          permissions?: ("token:create" | "token:read" | "token:update" | "token:delete" | "token:use" | "token:search")[];
          /** @default [] */
          rules?: components["schemas"]["AccessRule"][];
          expires_at?: string;
        };
      };
    };
    responses: {
      /** @description Authorized (no payload) */
      200: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Unknown or expired nonce */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Already authorized */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** The Elements browser library (global SvcElements); see docs/elements.md */
  elementsScript: {
    responses: {
      /** @description JavaScript (cacheable; an SRI hash per release is in docs/elements.md) */
      200: {
        content: never;
      };
    };
  };
  /** The script of the Elements frame page */
  elementsFrameScript: {
    responses: {
      /** @description JavaScript */
      200: {
        content: never;
      };
    };
  };
  /** The Elements frame page, embeddable only by the key's application's allowed_origins (CSP frame-ancestors) */
  elementsFrame: {
    parameters: {
      query?: {
        /** @description SHA-256 (hex) of the public or session key the page initialised Elements with */
        k?: string;
      };
    };
    responses: {
      /** @description HTML */
      200: {
        content: never;
      };
    };
  };
  /**
   * List the tenant's members (user_id repeatable; size at most 50)
   * @description Requires tenant:member:read.
   */
  listMembers: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        user_id?: string[];
      };
    };
    responses: {
      /** @description Page of members */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["TenantMember"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete a member and revoke all of its access (not the OWNER)
   * @description Requires tenant:member:delete.
   */
  deleteMember: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The OWNER cannot be deleted */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List invitations (status=PENDING|EXPIRED)
   * @description Requires tenant:invitation:read.
   */
  listInvitations: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        status?: "PENDING" | "EXPIRED";
      };
    };
    responses: {
      /** @description Page of invitations */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["TenantInvitation"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Invite someone by e-mail (a single-use acceptance link is sent)
   * @description Requires tenant:invitation:create.
   */
  createInvitation: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          email: string;
        };
      };
    };
    responses: {
      /** @description Invitation */
      201: {
        content: {
          "application/json": components["schemas"]["TenantInvitation"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Resend: 72 more hours from now, earlier links invalidated
   * @description Requires tenant:invitation:create, tenant:invitation:update.
   */
  resendInvitation: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Invitation */
      200: {
        content: {
          "application/json": components["schemas"]["TenantInvitation"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get an invitation
   * @description Requires tenant:invitation:read.
   */
  getInvitation: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Invitation */
      200: {
        content: {
          "application/json": components["schemas"]["TenantInvitation"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete an invitation; its links stop working
   * @description Requires tenant:invitation:delete.
   */
  deleteInvitation: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** The page an invitation link opens: a form that POSTs the code (from the link's fragment) to /invitations/accept */
  invitationPage: {
    responses: {
      /** @description HTML */
      200: {
        content: never;
      };
    };
  };
  /** Accept an invitation with the code from its e-mail (no key): an ADMIN member and its management key */
  acceptInvitation: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          code: string;
          first_name?: string;
          last_name?: string;
        };
      };
    };
    responses: {
      /** @description The new member with its management key (shown once) */
      201: {
        content: {
          "application/json": {
            id: string;
            tenant_id: string;
            /** @enum {string} */
            role: "OWNER" | "ADMIN";
            user: {
              id: string;
              email?: string;
              first_name?: string;
              last_name?: string;
              picture?: string;
            };
            created_by?: string;
            created_at: string;
            management_key: string;
            management_application_id: string;
          };
        };
      };
      /** @description Invalid, used or expired code */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List proxies (id repeatable; name with * wildcards)
   * @description Requires proxy:read.
   */
  listProxies: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        id?: string[];
        name?: string;
      };
    };
    responses: {
      /** @description Page of proxies */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["Proxy"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Create a pre-configured proxy (its key is generated)
   * @description Requires proxy:create.
   */
  createProxy: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          destination_url: string;
          request_transform?: {
            code: string;
          };
          response_transform?: {
            code: string;
          };
          application?: {
            id: string;
          };
          configuration?: {
            [key: string]: unknown;
          };
          require_auth?: boolean;
          allowed_hosts?: string[];
        };
      };
    };
    responses: {
      /** @description Proxy */
      201: {
        content: {
          "application/json": components["schemas"]["Proxy"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get a proxy
   * @description Requires proxy:read.
   */
  getProxy: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Proxy */
      200: {
        content: {
          "application/json": components["schemas"]["Proxy"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace a proxy's fields (its key stays)
   * @description Requires proxy:update.
   */
  replaceProxy: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          destination_url: string;
          request_transform?: {
            code: string;
          };
          response_transform?: {
            code: string;
          };
          application?: {
            id: string;
          };
          configuration?: {
            [key: string]: unknown;
          };
          require_auth?: boolean;
          allowed_hosts?: string[];
        };
      };
    };
    responses: {
      /** @description Proxy */
      200: {
        content: {
          "application/json": components["schemas"]["Proxy"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete a proxy (its key stops working)
   * @description Requires proxy:delete.
   */
  deleteProxy: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Update a proxy (RFC 7386 merge patch)
   * @description Requires proxy:update.
   */
  patchProxy: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/merge-patch+json": {
          name?: string;
          destination_url?: string;
          request_transform?: {
            code: string;
          } | null;
          response_transform?: {
            code: string;
          } | null;
          application?: {
            id: string;
          } | null;
          configuration?: {
            [key: string]: unknown;
          } | null;
          require_auth?: boolean;
          allowed_hosts?: string[] | null;
        };
      };
    };
    responses: {
      /** @description Updated */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not application/merge-patch+json */
      415: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Give a proxy a new key (the old one stops); a member's own key only, to whom the new key is answered
   * @description Requires proxy:update.
   */
  rotateProxyKey: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Proxy, with its new key */
      200: {
        content: {
          "application/json": components["schemas"]["Proxy"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /** Invoke a pre-configured proxy (GET); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyGet: {
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (PUT); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPut: {
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (POST); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPost: {
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (DELETE); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyDelete: {
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (PATCH); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPatch: {
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (GET); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyGetPath: {
    parameters: {
      path: {
        /** @description The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded. */
        proxy: string;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (PUT); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPutPath: {
    parameters: {
      path: {
        /** @description The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded. */
        proxy: string;
      };
    };
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (POST); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPostPath: {
    parameters: {
      path: {
        /** @description The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded. */
        proxy: string;
      };
    };
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (DELETE); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyDeletePath: {
    parameters: {
      path: {
        /** @description The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded. */
        proxy: string;
      };
    };
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /** Invoke a pre-configured proxy (PATCH); key in SVC-PROXY-KEY or svc-proxy-key */
  invokeProxyPatchPath: {
    parameters: {
      path: {
        /** @description The rest of the path, forwarded as sent: one segment, or several when the client sends `/` unencoded. */
        proxy: string;
      };
    };
    requestBody?: {
      content: {
        "*/*": unknown;
      };
    };
    responses: {
      /** @description The destination's raw response, with SVC-PROXY-DESTINATION-STATUS */
      200: {
        content: never;
      };
      /** @description proxy_error: unknown token or invalid expression */
      400: {
        content: never;
      };
      /** @description proxy_error: missing or invalid proxy key or SVC-API-KEY */
      401: {
        content: never;
      };
      /** @description proxy_error: token:use missing, or a refused destination */
      403: {
        content: never;
      };
    };
  };
  /**
   * List reactor formulas
   * @description Requires reactor:read.
   */
  listFormulas: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
      };
    };
    responses: {
      /** @description Page of formulas */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["ReactorFormula"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Create a reactor formula (code, configuration and request parameters)
   * @description Requires reactor:create.
   */
  createFormula: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          description?: string;
          /**
           * @default private
           * @enum {string}
           */
          type?: "private";
          code: string;
          /** @default [] */
          configuration?: ({
              name: string;
              /** @enum {string} */
              type: "string" | "number" | "boolean";
              description?: string;
            })[];
          /** @default [] */
          request_parameters?: ({
              name: string;
              /** @enum {string} */
              type: "string" | "number" | "boolean";
              description?: string;
              /** @default false */
              optional?: boolean;
            })[];
          allowed_hosts?: string[];
        };
      };
    };
    responses: {
      /** @description Formula */
      201: {
        content: {
          "application/json": components["schemas"]["ReactorFormula"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The code does not compile */
      422: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get a reactor formula
   * @description Requires reactor:read.
   */
  getFormula: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Formula */
      200: {
        content: {
          "application/json": components["schemas"]["ReactorFormula"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace a reactor formula
   * @description Requires reactor:update.
   */
  replaceFormula: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          description?: string;
          /**
           * @default private
           * @enum {string}
           */
          type?: "private";
          code: string;
          /** @default [] */
          configuration?: ({
              name: string;
              /** @enum {string} */
              type: "string" | "number" | "boolean";
              description?: string;
            })[];
          /** @default [] */
          request_parameters?: ({
              name: string;
              /** @enum {string} */
              type: "string" | "number" | "boolean";
              description?: string;
              /** @default false */
              optional?: boolean;
            })[];
          allowed_hosts?: string[];
        };
      };
    };
    responses: {
      /** @description Formula */
      200: {
        content: {
          "application/json": components["schemas"]["ReactorFormula"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The code does not compile */
      422: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete a reactor formula no reactor uses
   * @description Requires reactor:delete.
   */
  deleteFormula: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Reactors use it */
      409: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * List reactors (id repeatable; name with * wildcards)
   * @description Requires reactor:read.
   */
  listReactors: {
    parameters: {
      query?: {
        page?: number;
        size?: number;
        start?: string;
        id?: string[];
        name?: string;
      };
    };
    responses: {
      /** @description Page of reactors */
      200: {
        content: {
          "application/json": {
            pagination: components["schemas"]["Pagination"];
            data: components["schemas"]["Reactor"][];
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Create a reactor: a formula with its configuration
   * @description Requires reactor:create.
   */
  createReactor: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          /** @default {} */
          configuration?: {
            [key: string]: unknown;
          };
          formula?: {
            id: string;
          };
          code?: string;
          application?: {
            id: string;
          };
        };
      };
    };
    responses: {
      /** @description Reactor */
      201: {
        content: {
          "application/json": components["schemas"]["Reactor"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Get a reactor
   * @description Requires reactor:read.
   */
  getReactor: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Reactor */
      200: {
        content: {
          "application/json": components["schemas"]["Reactor"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace a reactor's name, configuration and application
   * @description Requires reactor:update.
   */
  replaceReactor: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          name: string;
          /** @default {} */
          configuration?: {
            [key: string]: unknown;
          };
          code?: string;
          application?: {
            id: string;
          } | null;
        };
      };
    };
    responses: {
      /** @description Reactor */
      200: {
        content: {
          "application/json": components["schemas"]["Reactor"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Delete a reactor
   * @description Requires reactor:delete.
   */
  deleteReactor: {
    parameters: {
      path: {
        id: string;
      };
    };
    responses: {
      /** @description Deleted */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Update a reactor (RFC 7386 merge patch)
   * @description Requires reactor:update.
   */
  patchReactor: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/merge-patch+json": {
          name?: string;
          configuration?: {
            [key: string]: unknown;
          } | null;
          code?: string;
          application?: {
            id: string;
          } | null;
        };
      };
    };
    responses: {
      /** @description Updated */
      204: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not application/merge-patch+json */
      415: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Invoke a reactor; with callback_url it runs asynchronously (202) and the result is a signed webhook
   * @description Requires token:use.
   */
  react: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          args?: unknown;
          /** Format: uri */
          callback_url?: string;
          timeout_ms?: number;
        };
      };
    };
    responses: {
      /** @description Reactor response */
      200: {
        content: {
          "application/json": components["schemas"]["ReactorResponse"];
        };
      };
      /** @description Accepted; request_id */
      202: {
        content: never;
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The code cannot run */
      422: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Invoke a reactor asynchronously; its result is kept 24 h for the caller
   * @description Requires token:use.
   */
  reactAsync: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
      path: {
        id: string;
      };
    };
    requestBody: {
      content: {
        "application/json": {
          args?: unknown;
        };
      };
    };
    responses: {
      /** @description Accepted */
      202: {
        content: {
          "application/json": components["schemas"]["AsyncReactorResponse"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * A react-async result as react would answer it, to its caller only
   * @description Requires token:use.
   */
  getReactionResult: {
    parameters: {
      path: {
        id: string;
        requestId: string;
      };
    };
    responses: {
      /** @description Reactor response */
      200: {
        content: {
          "application/json": components["schemas"]["ReactorResponse"];
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Not found or not yet run */
      404: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * The tenant's Standard Webhooks secret for reactor callbacks
   * @description Requires reactor:update.
   */
  getWebhookSecret: {
    responses: {
      /** @description Secret */
      200: {
        content: {
          "application/json": {
            secret: string;
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
  /**
   * Replace the webhook secret (later callbacks are signed with the new one)
   * @description Requires reactor:update.
   */
  rotateWebhookSecret: {
    parameters: {
      header?: {
        /** @description Makes the write safe to retry: a repeat with the same key within 24 h replays the first answer (SVC-IDEMPOTENT-REPLAYED: true). */
        "SVC-IDEMPOTENCY-KEY"?: string;
      };
    };
    responses: {
      /** @description New secret */
      200: {
        content: {
          "application/json": {
            secret: string;
          };
        };
      };
      /** @description Invalid input */
      400: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description Missing, invalid or revoked key */
      401: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The key lacks the permission */
      403: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back */
      423: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
      /** @description The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry */
      429: {
        content: {
          "application/problem+json": components["schemas"]["Problem"];
        };
      };
    };
  };
}
