import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiCallError, ApiClient, ApiConnectionError } from './api-client.js';

/** A port-0 server answering as the API would, and as a broken proxy in front of it would. */
let server: Server;
let url: string;
const seen: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/v1/ok')) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id: 'x' } }));
      if (req.url === '/v1/declined') {
        return res
          .writeHead(402, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.', transaction: { id: 't' } } }));
      }
      if (req.url === '/v1/proxy') return res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      if (req.url === '/v1/html-ok') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
      if (req.url === '/v1/slow') return setTimeout(() => res.end('{}'), 2_000);
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the /v1 client', () => {
  it('sends the key, JSON, the idempotency key and the query, and answers the JSON', async () => {
    const client = new ApiClient({ server: `${url}/`, apiKey: 'sk_test_abc' });
    expect(await client.data('POST', '/v1/ok', { body: { amount: 50 }, idempotencyKey: 'k-1', query: { page: 2, size: undefined } })).toEqual({ id: 'x' });
    const last = seen.at(-1);
    expect(last).toMatchObject({ method: 'POST', url: '/v1/ok?page=2', body: '{"amount":50}' });
    expect(last?.headers).toMatchObject({ authorization: 'Bearer sk_test_abc', 'content-type': 'application/json', 'idempotency-key': 'k-1' });
  });

  it('turns an API error into ApiCallError with the whole error body', async () => {
    const err = await new ApiClient({ server: url, apiKey: 'sk_test_abc' }).request('POST', '/v1/declined').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiCallError);
    expect(err).toMatchObject({ status: 402, error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', transaction: { id: 't' } } });
  });

  it('says plainly when an answer is not the API’s (a proxy’s error page, a login page)', async () => {
    const client = new ApiClient({ server: url, apiKey: 'sk_test_abc' });
    const proxy = await client.request('GET', '/v1/proxy').catch((e: unknown) => e);
    expect(proxy).toMatchObject({ status: 502, error: { type: 'api_error' } });
    expect((proxy as ApiCallError).message).toMatch(/HTTP 502 .*not an API answer/);
    const html = await client.request('GET', '/v1/html-ok').catch((e: unknown) => e);
    expect(html).toBeInstanceOf(ApiCallError);
    expect((html as ApiCallError).message).toMatch(/was not JSON/);
  });

  it('a refused connection and a timeout are ApiConnectionError, with the real reason', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await new ApiClient({ server: `http://127.0.0.1:${port}`, apiKey: 'k' }).request('GET', '/v1/ok').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiConnectionError);
    expect((refused as ApiConnectionError).reason).toMatch(/ECONNREFUSED/);
    const slow = await new ApiClient({ server: url, apiKey: 'k', timeoutMs: 100 }).request('GET', '/v1/slow').catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(ApiConnectionError);
  });
});
