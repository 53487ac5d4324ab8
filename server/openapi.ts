import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { RouteScope } from './accounts/permissions.js';
import { ErrorBodySchema } from '../shared/contract/common.js';
import { z as zo } from '../shared/contract/zod.js';

const IdempotencyHeaders = zo.object({
  'Idempotency-Key': zo.string().min(1).max(255).optional().openapi({ description: 'Repeat-safe key; the original result is replayed with 200' }),
});

export type RouteDoc = {
  method: 'get' | 'post' | 'delete' | 'patch';
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  params?: z.ZodObject;
  status?: number;
  response: z.ZodType;
  /** Endpoints that honour Idempotency-Key (spec §8). */
  idempotent?: boolean;
  /**
   * What a key needs to call it: a restricted key's permission (or several, all needed), or
   * `secret` for the secret key only. Required, so a route cannot be documented without deciding;
   * the gate enforces it (server/http/route-scopes.ts).
   */
  scope: RouteScope;
};

/** The permissions a route needs, as OpenAPI 3.1 lists them under its security requirement. */
function scopeList(scope: RouteScope): string[] {
  if (scope === 'secret') return [];
  return typeof scope === 'string' ? [scope] : [...scope];
}

/** Each router module exports its RouteDocs next to the routes, and the document is built from all of them. */
export function buildOpenApiDocument(docs: readonly RouteDoc[]): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      'sk_test_… or sk_live_… secret key, or an rk_test_…/rk_live_… restricted key holding the permissions an operation lists (none listed: secret keys only; see docs/api-choices.md)',
  });
  registry.register('Error', ErrorBodySchema);
  const errorResponse = { description: 'Error', content: { 'application/json': { schema: ErrorBodySchema } } };
  for (const doc of docs) {
    registry.registerPath({
      method: doc.method,
      path: doc.path,
      summary: doc.summary,
      security: [{ apiKey: scopeList(doc.scope) }],
      'x-required-scope': doc.scope === 'secret' ? 'secret_key' : scopeList(doc.scope).join(' '),
      request: {
        ...(doc.body ? { body: { content: { 'application/json': { schema: doc.body } } } } : {}),
        ...(doc.query ? { query: doc.query } : {}),
        ...(doc.params ? { params: doc.params } : {}),
        ...(doc.idempotent ? { headers: IdempotencyHeaders } : {}),
      },
      responses: {
        [String(doc.status ?? 200)]: { description: 'Success', content: { 'application/json': { schema: doc.response } } },
        '400': errorResponse,
        '401': errorResponse,
        '403': errorResponse,
        '404': errorResponse,
        '429': errorResponse,
      },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'pos payments API', version: '1', description: 'Card, ACH, terminal, hosted checkout and payment links. See docs/ for the choices made where the spec is silent.' },
    servers: [{ url: '/' }],
  });
}
