/**
 * `npm run client:types`: writes clients/typescript/schema.d.ts from the route table, through the same OpenAPI
 * document GET /openapi.json serves. Run it after changing a route or a schema; a test fails until it is run.
 */
import { writeFileSync } from "node:fs";
import { routeList } from "#shared/api/index.ts";
import { openApiDocument } from "#shared/openapi.ts";
import { CLIENT_TYPES_PATH, clientTypes } from "./openapi-types.ts";

writeFileSync(CLIENT_TYPES_PATH, await clientTypes(openApiDocument(routeList)));
console.log(`wrote ${CLIENT_TYPES_PATH.pathname}`);
