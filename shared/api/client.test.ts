import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/helpers/server.js';
import { PosApi } from './client.js';
import { ApiConnectionError, ApiRequestError } from './errors.js';

// @backend-once the client's handling of answers and transport errors; the server's answers are the API tests', on both backends.

/** A throwaway server on port 0 answering every request with `handler`. */
async function stub(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('PosApi against the real server', () => {
  let t: TestServer;
  let api: PosApi;
  beforeAll(async () => {
    t = await startTestServer();
    const m = await t.merchant('Client Shop');
    api = new PosApi({ server: t.url, apiKey: m.keys.sk_test });
  });
  afterAll(() => t.stop());

  it('returns typed answers', async () => {
    const { data } = await api.merchant();
    expect(data.business_name).toBe('Client Shop');
    expect(api.mode).toBe('test');
  });

  it('turns a 4xx body into ApiRequestError with its fields', async () => {
    const err = await caught(api.getTransaction('txn_doesnotexist'));
    expect(err).toBeInstanceOf(ApiRequestError);
    const e = err as ApiRequestError;
    expect(e.status).toBe(404);
    expect(e.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
    expect([e.type, e.code]).toEqual(['invalid_request_error', 'resource_missing']);
    expect(e.message).toMatch(/^invalid_request_error resource_missing: /);
    expect(e.raw).toBeUndefined();

    const bad = await caught(api.createTransaction({ amount: 10 }));
    expect((bad as ApiRequestError).status).toBe(400);
    expect((bad as ApiRequestError).param).toBe('amount');

    const unauthenticated = await caught(new PosApi({ server: t.url, apiKey: 'sk_test_nope' }).merchant());
    expect((unauthenticated as ApiRequestError).error.type).toBe('authentication_error');
  });
});

describe('PosApi transport errors', () => {
  it('keeps extra fields of the error body', async () => {
    const s = await stub((_req, res) => res.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'card_error', code: 'card_declined', message: 'Declined', transaction: { id: 't-1' } } })));
    try {
      const err = (await caught(new PosApi({ server: s.url, apiKey: 'sk_test_x' }).getTransaction('t-1'))) as ApiRequestError;
      expect(err.error.transaction).toEqual({ id: 't-1' });
      expect(err.code).toBe('card_declined');
    } finally {
      await close(s.server);
    }
  });

  it('reports a refused connection as ApiConnectionError', async () => {
    const s = await stub(() => undefined);
    const url = s.url;
    await close(s.server);
    const err = await caught(new PosApi({ server: url, apiKey: 'sk_test_x' }).merchant());
    expect(err).toBeInstanceOf(ApiConnectionError);
    expect((err as ApiConnectionError).code).toBe('ECONNREFUSED');
    expect((err as ApiConnectionError).message).toMatch(new RegExp(`^cannot reach ${url}: connect ECONNREFUSED`));
  });

  it('turns a proxy’s HTML 502 into a clear ApiRequestError, not a crash', async () => {
    const s = await stub((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>'));
    try {
      const err = (await caught(new PosApi({ server: s.url, apiKey: 'sk_test_x' }).merchant())) as ApiRequestError;
      expect(err).toBeInstanceOf(ApiRequestError);
      expect(err.status).toBe(502);
      expect(err.error.type).toBe('api_error');
      expect(err.error.message).toBe(`HTTP 502 from ${s.url}/v1/merchant (not JSON)`);
      expect(err.raw).toContain('Bad Gateway');
    } finally {
      await close(s.server);
    }
  });

  it('gives up on a call after its timeout', async () => {
    const s = await stub(() => undefined);
    try {
      const err = await caught(new PosApi({ server: s.url, apiKey: 'sk_test_x', timeoutMs: 50 }).merchant());
      expect(err).toBeInstanceOf(ApiConnectionError);
    } finally {
      s.server.closeAllConnections();
      await close(s.server);
    }
  });

  it('sends the key, JSON and an Idempotency-Key, and lets the caller present errors', async () => {
    const seen: Record<string, string | undefined>[] = [];
    const s = await stub((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, type: req.headers['content-type'], key: req.headers['idempotency-key'] as string | undefined, body });
        res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'idempotency_key_in_use', message: 'busy' } }));
      });
    });
    try {
      const api = new PosApi({ server: s.url, apiKey: 'sk_test_x', mapError: (err) => new Error(`mapped ${err.name}`) });
      await expect(api.createTransaction({ amount: 500 }, { idempotencyKey: 'k-1' })).rejects.toThrow('mapped ApiRequestError');
      expect(seen).toEqual([{ auth: 'Bearer sk_test_x', type: 'application/json', key: 'k-1', body: '{"amount":500}' }]);
    } finally {
      await close(s.server);
    }
  });
});

describe('PosApi retries', () => {
  it('retries a throttled read after its Retry-After and a 503, and answers what came next', async () => {
    const seen: string[] = [];
    const s = await stub((req, res) => {
      seen.push(req.method ?? '');
      if (seen.length === 1) res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":{"type":"rate_limit_error","message":"slow down"}}');
      else if (seen.length === 2) res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"type":"api_error","message":"draining"}}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"id":"m-1"}}');
    });
    try {
      const merchant = (await new PosApi({ server: s.url, apiKey: 'sk_test_x', maxRetries: 2, retryBaseMs: 1 }).merchant()) as unknown as { data: { id: string } };
      expect(merchant.data.id).toBe('m-1');
      expect(seen).toEqual(['GET', 'GET', 'GET']);
    } finally {
      await close(s.server);
    }
  });

  it('gives up after its retries with the last answer, and never repeats a write without an Idempotency-Key', async () => {
    let calls = 0;
    const s = await stub((_req, res) => {
      calls += 1;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":{"type":"rate_limit_error","message":"slow down"}}');
    });
    try {
      const api = new PosApi({ server: s.url, apiKey: 'sk_test_x', maxRetries: 2, retryBaseMs: 1 });
      expect(await caught(api.merchant())).toMatchObject({ status: 429 });
      expect(calls).toBe(3);
      calls = 0;
      const raw = await api.transport.send('POST', '/v1/customers', { body: { name: 'x' } });
      expect(raw.status).toBe(429);
      expect(calls).toBe(1);
    } finally {
      await close(s.server);
    }
  });
});
