import pino from 'pino';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDomain, type Domain } from '../../test/helpers/domain.js';
import { grants, missingPermission } from '../accounts/permissions.js';
import { PRESETS } from '../../shared/contract/permissions.js';
import { createApp, routeDocs } from '../app.js';
import { routeScopes } from './route-scopes.js';

let domain: Domain;
let app: Express;

beforeAll(async () => {
  domain = await openDomain();
  app = createApp({
    store: domain.store,
    clock: domain.clock,
    logger: pino({ level: 'silent' }),
    config: { rateLimit: 1_000, rateWindowSeconds: 60, simulateLive: false },
    processor: domain.processor,
    services: domain.services,
  });
});
afterAll(() => domain.close());

interface Layer {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every route Express will serve, as `METHOD /full/path` with `:param`s, found by walking the routers. */
function servedRoutes(stack: Layer[], prefix = ''): { method: string; path: string }[] {
  return stack.flatMap((layer) => {
    const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
    if (layer.route) {
      const path = `${prefix}${layer.route.path === '/' ? '' : layer.route.path}` || '/';
      return Object.keys(layer.route.methods).filter((m) => m !== '_all').map((method) => ({ method: method.toUpperCase(), path }));
    }
    return layer.handle.stack ? servedRoutes(layer.handle.stack, prefix + mount) : [];
  });
}

describe('route scopes', () => {
  it('every /v1 route Express serves declares the scope a key needs (a route without one fails here)', () => {
    const router = (app as unknown as { router: { stack: Layer[] } }).router;
    const served = servedRoutes(router.stack).filter((r) => r.path.startsWith('/v1/') && r.path !== '/v1/openapi.json');
    expect(served.length).toBeGreaterThan(50);
    const lookup = routeScopes(routeDocs);
    const undeclared = served.filter((r) => lookup(r.method, r.path.replace(/:(\w+)/g, 'x')) === undefined).map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
  });

  it('matches literal paths before parameterised ones, HEAD as GET, any case and a trailing slash', () => {
    const lookup = routeScopes(routeDocs);
    expect(lookup('GET', '/v1/events/stream')).toBe('events:read');
    expect(lookup('POST', '/v1/events/evt_1/resend')).toBe('webhooks:write');
    expect(lookup('HEAD', '/v1/transactions/')).toBe('transactions:read');
    expect(lookup('POST', '/V1/Transactions/abc/Refunds')).toBe('refunds:write');
    expect(lookup('GET', '/v1/api-keys')).toBe('secret');
    expect(lookup('PUT', '/v1/transactions')).toBeUndefined();
    expect(lookup('GET', '/v1/transactions/a/b/c')).toBeUndefined();
  });

  it('the counter preset covers every call the agent and the counter TUI make, and not refunds', () => {
    const lookup = routeScopes(routeDocs);
    const counter = new Set<string>(PRESETS.counter);
    const calls = [
      'GET /v1/merchant', 'GET /v1/terminal/readers', 'GET /v1/terminal/locations', 'POST /v1/terminal/locations', 'POST /v1/terminals',
      'GET /v1/transactions/x/receipt', 'POST /v1/transactions', 'POST /v1/terminal/create-payment', 'POST /v1/terminal/process-payment',
      'POST /v1/terminal/simulate-payment', 'POST /v1/terminal/cancel-action', 'POST /v1/transactions/x/cancel', 'GET /v1/transactions',
      'GET /v1/transactions/x', 'POST /v1/payment-links', 'GET /v1/events', 'GET /v1/agent/connect',
    ];
    for (const call of calls) {
      const [method = '', path = ''] = call.split(' ');
      const scope = lookup(method, path);
      expect(scope, call).toBeDefined();
      expect(scope !== 'secret' && scope !== undefined && missingPermission(counter, scope), call).toBeUndefined();
    }
    expect(grants(counter, 'refunds:write')).toBe(false);
  });
});
