// Writes the TypeScript types of the /v1 OpenAPI document (openapi-typescript) to
// test/generated/pos-api.d.ts, from the built server: part of `npm run build`, never edited by hand.
// test/openapi-document.test.ts drives the API through openapi-fetch with them and checks they are
// current. An install without dev dependencies (a deployment) has no openapi-typescript and no
// tests to type: it skips this, saying so.
import { mkdirSync, writeFileSync } from 'node:fs';

const generator = await import('openapi-typescript').catch(() => undefined);
if (!generator) {
  console.log('openapi-client: openapi-typescript is not installed (no dev dependencies); the test client types were not written');
  process.exit(0);
}
const { apiRoutes } = await import('../dist/server/app.js');
const { openApiDocument } = await import('../dist/server/http/route-table.js');

const target = new URL('../test/generated/pos-api.d.ts', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
// A property with a `default` is one a request may leave out (the server fills it in), and no
// response schema has one: so a default does not make a property required (openapi-typescript's
// own default reads it as always present, which makes `confirm` or `capture_method` mandatory in a
// request). test/openapi-document.test.ts generates with the same options.
const GENERATOR_OPTIONS = { defaultNonNullable: false };
writeFileSync(target, generator.astToString(await generator.default(openApiDocument(apiRoutes), GENERATOR_OPTIONS)));
