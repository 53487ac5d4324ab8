// Writes the TypeScript types of the /v1 OpenAPI document (openapi-typescript) to
// test/generated/pos-api.d.ts, from the built server: part of `npm run build`, never edited by hand.
// test/openapi-client.test.ts drives the API through openapi-fetch with them and checks they are current.
import { mkdirSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const { apiRoutes } = await import('../dist/server/app.js');
const { openApiDocument } = await import('../dist/server/http/route-table.js');

const target = new URL('../test/generated/pos-api.d.ts', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
writeFileSync(target, astToString(await openapiTS(openApiDocument(apiRoutes))));
