import { request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDomain, type Domain } from '../../test/helpers/domain.js';
import { createMerchant } from '../accounts/merchants.js';
import { listenOver } from '../../test/helpers/app.js';
import type { RateLimiter } from './rate-limit.js';

/**
 * The lean path (server/http/lean-path.ts) answers as the regular one does: each request is sent to
 * an app with it and to one without it, over the same store, and the two answers must be the same
 * bytes (status line, every header in order, body), but for what differs between any two requests
 * (the request id, the date, the server timing).
 */

interface Raw {
  status: number;
  headers: string[];
  body: string;
}

/** Headers whose value is the request's own; their names and places are still compared. */
const PER_REQUEST = new Set(['request-id', 'date', 'server-timing']);

function send(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    // The path as written (a URL string would lose a fragment before it is sent).
    const { hostname, port } = new URL(url);
    const req = request({ hostname, port, path, method, headers: { ...headers, ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!;
          lines.push(`${name}: ${PER_REQUEST.has(name.toLowerCase()) ? '…' : res.rawHeaders[i + 1]}`);
        }
        resolve({ status: res.statusCode ?? 0, headers: lines, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const allowing: RateLimiter = { hit: () => ({ allowed: true, limit: 100, remaining: 99, resetSeconds: 7 }) };
const refusing: RateLimiter = { hit: () => ({ allowed: false, limit: 100, remaining: 0, resetSeconds: 7 }) };

let domain: Domain;
const servers: Server[] = [];
let taken: string[] = [];
/** Base URLs: the lean and the regular app, allowing every request; the same two refusing every one. */
let lean: string;
let regular: string;
let leanRefusing: string;
let regularRefusing: string;
let secret: string;
let live: string;
let publishable: string;
let stranger: string;
let reader: string;
let unrelated: string;
let transactionId: string;
let transactionReference: string;

async function listen(limiter: RateLimiter, enabled: boolean): Promise<string> {
  const { server, url } = await listenOver(domain, 100, { rateLimiter: limiter, leanPaths: { enabled, taken: (operationId) => taken.push(operationId) } });
  servers.push(server);
  return url;
}

const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
const json = { 'Content-Type': 'application/json' };

async function restricted(scopes: string[]): Promise<string> {
  const res = await send(regular, 'POST', '/v1/api-keys', { ...bearer(secret), ...json }, JSON.stringify({ name: scopes.join(' '), scopes }));
  expect(res.status, res.body).toBe(201);
  return (JSON.parse(res.body) as { data: { secret: string } }).data.secret;
}

beforeAll(async () => {
  domain = await openDomain();
  lean = await listen(allowing, true);
  regular = await listen(allowing, false);
  leanRefusing = await listen(refusing, true);
  regularRefusing = await listen(refusing, false);
  const shop = await createMerchant(domain.store, domain.clock, { businessName: 'Lean Shop' });
  secret = shop.keys.sk_test;
  live = shop.keys.sk_live;
  publishable = shop.keys.pk_test;
  stranger = (await createMerchant(domain.store, domain.clock, { businessName: 'Other Shop' })).keys.sk_test;
  reader = await restricted(['transactions:read']);
  unrelated = await restricted(['customers:read']);
  // Through the regular app: the lean one is judged by its answers to what follows.
  const created = await send(regular, 'POST', '/v1/transactions', { ...bearer(secret), ...json, 'Idempotency-Key': 'lean-first' }, JSON.stringify({ amount: 4750, currency: 'usd', receipt_email: 'ann@example.com', metadata: { order: '17' } }));
  expect(created.status, created.body).toBe(201);
  const data = (JSON.parse(created.body) as { data: { id: string; reference: string } }).data;
  transactionId = data.id;
  transactionReference = data.reference;
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await domain.close();
});

/** Sends the request to the lean app and to the regular one and expects the same answer; returns it and the lean path's takings. */
async function same(method: string, path: string, headers: Record<string, string>, body?: string, pair: [string, string] = [lean, regular]): Promise<{ answer: Raw; lanes: string[] }> {
  taken = [];
  const leanAnswer = await send(pair[0], method, path, headers, body);
  const lanes = taken;
  taken = [];
  const regularAnswer = await send(pair[1], method, path, headers, body);
  expect(taken, 'the regular app takes no lean path').toEqual([]);
  expect(leanAnswer).toEqual(regularAnswer);
  return { answer: leanAnswer, lanes };
}

describe('the lean path of a payment read by id', () => {
  it('answers a payment by uuid and by reference as the regular path does', async () => {
    for (const id of [transactionId, transactionReference]) {
      const { answer, lanes } = await same('GET', `/v1/transactions/${id}`, bearer(secret));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ data: { id: transactionId, receipt_email: 'ann@example.com' } });
      expect(lanes).toEqual(['retrieveTransaction']);
    }
  });

  it('refuses as the regular path does: unknown and malformed ids, missing and bad keys, another merchant, the other mode', async () => {
    const cases: [string, Record<string, string>, number][] = [
      ['00000000-0000-4000-8000-000000000000', bearer(secret), 404],
      ['txn_nothing', bearer(secret), 404],
      ['not-an-id', bearer(secret), 404],
      [transactionId, {}, 401],
      [transactionId, bearer('sk_test_not_a_key_at_all_0000000000000000000'), 401],
      [transactionId, { Authorization: `Basic ${secret}` }, 401],
      [transactionId, bearer(stranger), 404],
      [transactionId, bearer(live), 404],
      [transactionId, bearer(publishable), 403],
    ];
    for (const [id, headers, status] of cases) {
      const { answer, lanes } = await same('GET', `/v1/transactions/${id}`, headers);
      expect(answer.status, `${id} ${JSON.stringify(headers)}: ${answer.body}`).toBe(status);
      expect(lanes).toEqual(['retrieveTransaction']);
    }
  });

  it('holds restricted keys to their permissions and hides customer data from a key without customers:read', async () => {
    const refused = await same('GET', `/v1/transactions/${transactionId}`, bearer(unrelated));
    expect(refused.answer.status).toBe(403);
    expect(JSON.parse(refused.answer.body)).toMatchObject({ error: { code: 'missing_scope' } });
    const allowed = await same('GET', `/v1/transactions/${transactionId}`, bearer(reader));
    expect(allowed.answer.status).toBe(200);
    expect(JSON.parse(allowed.answer.body)).toMatchObject({ data: { id: transactionId, receipt_email: null } });
  });

  it('answers 429 with the same headers and body once the window is spent', async () => {
    const { answer, lanes } = await same('GET', `/v1/transactions/${transactionId}`, bearer(secret), undefined, [leanRefusing, regularRefusing]);
    expect(answer.status).toBe(429);
    expect(answer.headers).toContain('Retry-After: 7');
    expect(lanes).toEqual(['retrieveTransaction']);
  });

  it('takes the path in any letter case and with a trailing slash, as Express routes it', async () => {
    for (const path of [`/V1/Transactions/${transactionId}`, `/v1/transactions/${transactionId}/`]) {
      const { answer, lanes } = await same('GET', path, bearer(secret));
      expect(answer.status).toBe(200);
      expect(lanes).toEqual(['retrieveTransaction']);
    }
  });

  it('leaves to the regular path what Express might read otherwise: a query string, percent-encoding, a fragment, other characters, HEAD, other routes', async () => {
    for (const [method, path] of [
      ['GET', `/v1/transactions/${transactionId}?expand=x`],
      ['GET', `/v1/transactions/%74xn_nothing`],
      ['GET', `/v1/transactions/%ff`],
      ['GET', `/v1/transactions/${transactionId}#fragment`],
      ['GET', `/v1/transactions/${transactionId};x`],
      ['HEAD', `/v1/transactions/${transactionId}`],
      ['GET', `/v1/transactions/${transactionId}/refunds`],
      ['GET', '/v1/transactions'],
    ] as const) {
      const { lanes } = await same(method, path, bearer(secret));
      expect(lanes, `${method} ${path}`).toEqual([]);
    }
  });
});

describe('the lean path of a payment create', () => {
  const body = JSON.stringify({ amount: 4750, currency: 'usd', receipt_email: 'ann@example.com', metadata: { order: '17' } });

  it('replays a finished create as the regular path does, to the secret key and to a key without customers:read', async () => {
    const replay = await same('POST', '/v1/transactions', { ...bearer(secret), ...json, 'Idempotency-Key': 'lean-first' }, body);
    expect(replay.answer.status).toBe(200);
    expect(replay.answer.headers).toContain('Idempotent-Replayed: true');
    expect(JSON.parse(replay.answer.body)).toMatchObject({ data: { id: transactionId, receipt_email: 'ann@example.com' } });
    expect(replay.lanes).toEqual(['createTransaction']);
  });

  it('refuses as the regular path does: no key, a key without the permission, bad JSON, another media type, a bad key or body, live mode on the simulator, a spent window', async () => {
    const cases: [Record<string, string>, string, number, [string, string]?][] = [
      [{ ...json, 'Idempotency-Key': 'lean-first' }, body, 401],
      [{ ...bearer(reader), ...json, 'Idempotency-Key': 'lean-first' }, body, 403],
      [{ ...bearer(publishable), ...json }, body, 403],
      [{ ...bearer(secret), ...json }, '{"amount":', 400],
      [{ ...bearer(secret), 'Content-Type': 'text/plain' }, body, 415],
      [{ ...bearer(secret), ...json, 'Idempotency-Key': 'x'.repeat(300) }, body, 400],
      [{ ...bearer(secret), ...json }, JSON.stringify({ currency: 'usd' }), 400],
      [{ ...bearer(secret), ...json }, JSON.stringify({ amount: 4750, currency: 'usd', surprise: true }), 400],
      [{ ...bearer(live), ...json, 'Idempotency-Key': 'lean-live' }, body, 400],
      [{ ...bearer(secret), ...json, 'Idempotency-Key': 'lean-first' }, body, 429, [leanRefusing, regularRefusing]],
    ];
    for (const [headers, sent, status, pair] of cases) {
      const { answer, lanes } = await same('POST', '/v1/transactions', headers, sent, pair);
      expect(answer.status, `${JSON.stringify(headers)} ${sent}: ${answer.body}`).toBe(status);
      expect(lanes).toEqual(['createTransaction']);
    }
  });

  it('creates a payment whose answer differs from the regular path only in what is new to it', async () => {
    taken = [];
    const fresh = await send(lean, 'POST', '/v1/transactions', { ...bearer(secret), ...json, 'Idempotency-Key': 'lean-fresh' }, body);
    expect(taken).toEqual(['createTransaction']);
    const regularFresh = await send(regular, 'POST', '/v1/transactions', { ...bearer(secret), ...json, 'Idempotency-Key': 'regular-fresh' }, body);
    expect(fresh.status).toBe(201);
    const own = (raw: Raw, key: string) => {
      const answer = JSON.parse(raw.body) as { data: { id: string; reference: string; payment_intent_id: string }; client_secret: string };
      const data = answer.data;
      return {
        ...raw,
        headers: raw.headers.map((line) => line.replace(key, 'KEY').replace(/^Content-Length: \d+$/, 'Content-Length: …')),
        body: raw.body.replaceAll(data.id, 'ID').replaceAll(data.reference, 'REF').replaceAll(answer.client_secret, 'SECRET').replaceAll(data.payment_intent_id, 'PI'),
      };
    };
    expect(own(fresh, 'lean-fresh')).toEqual(own(regularFresh, 'regular-fresh'));
    // And its replay, through either path, is the same bytes.
    const replay = await same('POST', '/v1/transactions', { ...bearer(secret), ...json, 'Idempotency-Key': 'lean-fresh' }, body);
    expect(replay.answer.status).toBe(200);
  });
});
