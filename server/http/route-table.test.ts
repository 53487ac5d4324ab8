import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Json } from '../../test/helpers/api.js';
import { openDomain, type Domain } from '../../test/helpers/domain.js';
import { createMerchant } from '../accounts/merchants.js';
import { grants, missingPermission } from '../accounts/permissions.js';
import { type Permission, PRESETS } from '../../shared/contract/permissions.js';
import { apiRoutes } from '../app.js';
import { listenOver } from '../../test/helpers/app.js';
import { declaredOrFlagged, routeMatcher } from './route-table.js';
import { uncheckedFetch } from '../../test/helpers/contract.js';
import { answerForFailure, ProcessorFailure } from '../processor/errors.js';

let domain: Domain;
let server: Server;
let url: string;
let secretKey: string;

beforeAll(async () => {
  domain = await openDomain();
  ({ server, url } = await listenOver(domain, 1_000));
  secretKey = (await createMerchant(domain.store, domain.clock, { businessName: 'Gate Shop' })).keys.sk_test;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await domain.close();
});

async function restrictedKey(scopes: readonly Permission[]): Promise<string> {
  const res = await client(url, secretKey).post<{ data: { secret: string } }>('/v1/api-keys', { name: scopes.join(' ') || 'none', scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.secret;
}

interface OpenApiOperation {
  operationId?: string;
  security: { apiKey: string[] }[];
  'x-required-scope': string;
  responses: Record<string, unknown>;
}

describe('the OpenAPI document of the route table', () => {
  let paths: Record<string, Record<string, OpenApiOperation>>;
  beforeAll(async () => {
    const res = await client(url).get<{ paths: typeof paths }>('/v1/openapi.json');
    expect(res.status).toBe(200);
    paths = res.body.paths;
  });
  const operations = () => Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));

  it('checks every refusal against its operation in the one error handler: a processor failure it maps, an undeclared one a 500 naming it', async () => {
    // Raw fetches: the suite's contract check would (rightly) fail the undeclared 500 below.
    const balance = () => uncheckedFetch(`${url}/v1/balance`, { headers: { authorization: `Bearer ${secretKey}` } });
    domain.processor.failNext('retrieveBalance', new ProcessorFailure('idempotency', 'Keys for idempotent requests can only be used with the same parameters'));
    const mapped = await balance();
    expect(mapped.status).toBe(400);
    expect(await mapped.json()).toMatchObject({ error: { code: 'processor_idempotency_error' } });

    domain.processor.failNext('retrieveBalance', new ProcessorFailure('card', 'Your card was declined.', { code: 'card_declined' }));
    const undeclared = await balance();
    expect(undeclared.status).toBe(500);
    expect(await undeclared.json()).toMatchObject({ error: { type: 'api_error', message: 'retrieveBalance raised 402 card_declined, which its declaration in the route table does not list' } });

    // An operation that does not call the processor declares no 502: a processor failure there is flagged too.
    const list = apiRoutes.find((r) => r.operationId === 'listTransactions');
    const flagged = declaredOrFlagged(list, answerForFailure(new ProcessorFailure('api', 'Stripe is down')));
    expect(flagged.status).toBe(500);
    const refund = apiRoutes.find((r) => r.operationId === 'createRefund');
    expect(declaredOrFlagged(refund, answerForFailure(new ProcessorFailure('api', 'Stripe is down'))).status).toBe(502);
  });

  it('names every operation once, in camelCase, and documents every declared one with its scope', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)), JSON.stringify(ids)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations().map(({ method, path }) => `${method} ${path}`).sort()).toEqual(apiRoutes.map((r) => `${r.method} ${r.path}`).sort());
    expect(operations().length).toBeGreaterThan(50);
    expect(paths['/v1/transactions']?.get?.operationId).toBe('listTransactions');
    expect(paths['/v1/transactions']?.post?.operationId).toBe('createTransaction');
    expect(paths['/v1/transactions/{id}/refunds']?.post?.['x-required-scope']).toBe('refunds:write');
    expect(paths['/v1/api-keys']?.get?.['x-required-scope']).toBe('secret_key');
  });

  it('lists the statuses an operation answers: a replayed create 200 beside 201, a declined payment 402, conflicts 409, a body not JSON 415 (any method that sends one)', () => {
    const statuses = (path: string, method: string) => Object.keys(paths[path]?.[method]?.responses ?? {});
    expect(statuses('/v1/transactions', 'post')).toEqual(expect.arrayContaining(['200', '201', '402', '409', '415']));
    expect(statuses('/v1/terminal/create-payment', 'post')).toEqual(expect.arrayContaining(['200', '201', '402', '409']));
    expect(statuses('/v1/transactions/{id}/refunds', 'post')).toEqual(expect.arrayContaining(['200', '201', '409']));
    expect(statuses('/v1/transactions/{id}/refunds', 'post')).not.toContain('402');
    expect(statuses('/v1/transactions', 'get')).not.toContain('409');
    expect(statuses('/v1/transactions', 'get')).not.toContain('402');
    expect(statuses('/v1/agent/connect', 'get')).toContain('426');
  });
});

/** A call of each family, the permission it needs, and its status for a key that holds it. */
const SAMPLES: { method: 'GET' | 'POST' | 'DELETE'; path: string; body?: Json; needs: Permission; passes: number }[] = [
  { method: 'GET', path: '/v1/transactions', needs: 'transactions:read', passes: 200 },
  { method: 'POST', path: '/v1/transactions/txn_missing/refunds', body: { amount: 100 }, needs: 'refunds:write', passes: 404 },
  { method: 'POST', path: '/v1/customers', body: { name: 'Ada' }, needs: 'customers:write', passes: 201 },
  { method: 'GET', path: '/v1/terminal/locations', needs: 'terminal:read', passes: 200 },
  { method: 'DELETE', path: '/v1/webhook-endpoints/we_missing', needs: 'webhooks:write', passes: 404 },
  { method: 'GET', path: '/v1/events', needs: 'events:read', passes: 200 },
  { method: 'GET', path: '/v1/merchant/bank-account', needs: 'merchant:read', passes: 404 },
];

describe('the scope gate', () => {
  it.each(SAMPLES)('$method $path: 403 missing_scope without $needs, through the gate with it', async ({ method, path, body, needs, passes }) => {
    const other: Permission = needs.startsWith('events') ? 'customers:read' : 'events:read';
    const without = await client(url, await restrictedKey([other])).raw(method, path, body ? { body } : {});
    expect(without.status).toBe(403);
    expect(without.body).toEqual({
      error: { type: 'permission_error', code: 'missing_scope', required_scope: needs, message: `This key lacks the \`${needs}\` permission: use a key that has it, or a secret key` },
    });
    const holding = await client(url, await restrictedKey([needs])).raw(method, path, body ? { body } : {});
    expect(holding.status, JSON.stringify(holding.body)).toBe(passes);
  });

  it('asks for every permission an operation lists, and matches as Express routes (case, trailing slash, HEAD as GET)', async () => {
    const terminalOnly = client(url, await restrictedKey(['terminal:write']));
    expect((await terminalOnly.get<{ error: Json }>('/v1/agent/connect')).body.error).toMatchObject({ code: 'missing_scope', required_scope: 'transactions:read' });
    const agent = client(url, await restrictedKey(['terminal:write', 'transactions:read']));
    expect((await agent.get<{ error: Json }>('/v1/agent/connect')).status).toBe(200);
    const refunds = client(url, await restrictedKey(['refunds:write']));
    expect((await refunds.post<{ error: Json }>('/V1/Transactions/txn_missing/Refunds/', { amount: 100 })).body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect((await refunds.raw('HEAD', '/v1/transactions')).status).toBe(403);
    const reader = client(url, await restrictedKey(['transactions:read']));
    expect((await reader.raw('HEAD', '/v1/transactions')).status).toBe(200);
  });

  it('keeps restricted keys to declared operations: secret-only ones are 403, undeclared ones 404', async () => {
    const key = client(url, await restrictedKey(['transactions:write']));
    expect((await key.get<{ error: Json }>('/v1/api-keys')).body).toMatchObject({ error: { type: 'permission_error', code: 'secret_key_required' } });
    const put = await key.raw<{ error: Json }>('PUT', '/v1/transactions', { body: {} });
    expect(put.status).toBe(404);
    expect(put.body.error).toMatchObject({ code: 'resource_missing', message: 'Unrecognized request URL (PUT: /v1/transactions)' });
  });
});

describe('the counter preset', () => {
  it('covers every call the agent and the counter TUI make, and not refunds', () => {
    const match = routeMatcher(apiRoutes);
    const counter = new Set<string>(PRESETS.counter);
    const calls = [
      'GET /v1/merchant', 'GET /v1/terminal/readers', 'GET /v1/terminal/locations', 'POST /v1/terminal/locations', 'POST /v1/terminals',
      'GET /v1/transactions/x/receipt', 'POST /v1/transactions', 'POST /v1/terminal/create-payment', 'POST /v1/terminal/process-payment',
      'POST /v1/terminal/simulate-payment', 'POST /v1/terminal/cancel-action', 'POST /v1/transactions/x/cancel', 'GET /v1/transactions',
      'GET /v1/transactions/x', 'POST /v1/payment-links', 'GET /v1/events', 'GET /v1/agent/connect',
    ];
    for (const call of calls) {
      const [method = '', path = ''] = call.split(' ');
      const scope = match(method, path)?.route.scope;
      expect(scope, call).toBeDefined();
      expect(scope !== 'secret' && scope !== undefined && missingPermission(counter, scope), call).toBeUndefined();
    }
    expect(grants(counter, 'refunds:write')).toBe(false);
  });
});

describe('the route matcher', () => {
  const match = routeMatcher(apiRoutes);

  it('finds an operation by method and path, with its parameters decoded, as Express would route it', () => {
    expect(match('GET', '/v1/transactions/txn_1')).toMatchObject({ route: { operationId: 'retrieveTransaction' }, params: ['txn_1'] });
    expect(match('POST', '/V1/TRANSACTIONS/txn%5F1/refunds/')).toMatchObject({ route: { operationId: expect.stringMatching(/refund/i) }, params: ['txn_1'] });
    expect(match('HEAD', '/v1/transactions')?.route.path).toBe('/v1/transactions');
  });

  it('finds nothing for a path outside the API, a bare mount, an unknown group or a method the group does not take', () => {
    for (const [method, path] of [
      ['GET', '/v1'],
      ['GET', '/v1/'],
      ['GET', '/v2/transactions'],
      ['GET', '/v1x/transactions'],
      ['GET', '//v1/transactions'],
      ['GET', '/v1/no-such-group/1'],
      ['PUT', '/v1/transactions'],
      ['GET', '/v1/transactions/a/b/c/d'],
    ] as const) {
      expect(match(method, path), `${method} ${path}`).toBeUndefined();
    }
  });
});
