/**
 * `npm run docs:api`: writes docs/api-reference.md from the route table, through the same OpenAPI document
 * GET /openapi.json serves. Run it after changing a route or a schema; a unit test fails until it is run.
 */
import { writeFileSync } from "node:fs";
import { routeList } from "#shared/api/index.ts";
import { openApiDocument } from "#shared/openapi.ts";
import { type ApiDocument, renderApiReference } from "./api-reference.ts";

const API_REFERENCE_PATH = new URL("../docs/api-reference.md", import.meta.url);

writeFileSync(API_REFERENCE_PATH, renderApiReference(openApiDocument(routeList) as unknown as ApiDocument));
console.log(`wrote ${API_REFERENCE_PATH.pathname}`);
