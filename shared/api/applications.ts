import * as z from "zod";
import {
  applicationKeyParams,
  applicationKeySchema,
  applicationSchema,
  createApplicationBody,
  updateApplicationBody,
} from "#shared/schemas/applications.ts";
import { idParams, paginated, pagingQuery } from "#shared/schemas/common.ts";
import { problem, routeGroup } from "./group.ts";

/** Applications and their keys. */
export const applicationsRoutes = routeGroup("applications", {
  createApplication: {
    answersCredential: true,
    method: "POST",
    path: "/applications",
    auth: "key",
    permissions: ["application:create"],
    summary: "Create an application (its key is shown once)",
    body: createApplicationBody,
    responses: { 201: { description: "Created", schema: applicationSchema } },
  },
  listApplications: {
    method: "GET",
    path: "/applications",
    auth: "key",
    permissions: ["application:read"],
    summary: "List applications",
    query: pagingQuery(),
    responses: {
      200: { description: "Page of applications", schema: paginated(applicationSchema) },
    },
  },
  getOwnApplication: {
    method: "GET",
    path: "/applications/key",
    auth: "key",
    summary: "The application of the calling key",
    responses: {
      200: {
        description:
          "Application. To a key of a public or private application, or a session, without who made or changed it (minted_by, created_through, created_by, modified_by) and without its keys",
        schema: applicationSchema,
      },
    },
  },
  getApplication: {
    method: "GET",
    path: "/applications/{id}",
    auth: "key",
    permissions: ["application:read"],
    summary: "Get an application",
    params: idParams,
    responses: {
      200: { description: "Application", schema: applicationSchema },
      404: problem("Not found"),
    },
  },
  updateApplication: {
    method: "PUT",
    path: "/applications/{id}",
    auth: "key",
    permissions: ["application:update"],
    summary: "Replace an application's name, permissions and rules",
    params: idParams,
    body: updateApplicationBody,
    responses: {
      200: { description: "Application", schema: applicationSchema },
      404: problem("Not found"),
    },
  },
  deleteApplication: {
    method: "DELETE",
    path: "/applications/{id}",
    auth: "key",
    permissions: ["application:delete"],
    summary: "Delete an application and revoke its keys",
    params: idParams,
    responses: { 204: { description: "Deleted" }, 404: problem("Not found") },
  },
  createApplicationKey: {
    answersCredential: true,
    method: "POST",
    path: "/applications/{id}/keys",
    auth: "key",
    permissions: ["application:update"],
    summary: "Add a key to an application (shown once)",
    params: idParams,
    responses: {
      201: { description: "Created", schema: applicationKeySchema },
      400: problem("The application holds 20 keys already"),
      404: problem("Not found"),
      409: problem("Other keys of this application are being added at the same moment; retry"),
    },
  },
  listApplicationKeys: {
    method: "GET",
    path: "/applications/{id}/keys",
    auth: "key",
    permissions: ["application:read"],
    summary: "List an application's keys (ids only)",
    params: idParams,
    responses: {
      200: { description: "Keys", schema: z.array(applicationKeySchema) },
      404: problem("Not found"),
    },
  },
  getApplicationKey: {
    method: "GET",
    path: "/applications/{id}/keys/{keyId}",
    auth: "key",
    permissions: ["application:read"],
    summary: "Get one key's metadata",
    params: applicationKeyParams,
    responses: {
      200: { description: "Key", schema: applicationKeySchema },
      404: problem("Not found"),
    },
  },
  deleteApplicationKey: {
    method: "DELETE",
    path: "/applications/{id}/keys/{keyId}",
    auth: "key",
    permissions: ["application:update"],
    summary: "Revoke a key",
    params: applicationKeyParams,
    responses: { 204: { description: "Revoked" }, 404: problem("Not found") },
  },
});
