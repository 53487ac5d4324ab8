import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWebhook, takeViolations } from './helpers/contract.js';

/**
 * The suite's check of the /v1 contract itself: an answer or a delivery the document does not allow
 * is a violation recorded for the running test (which test/setup/contract.ts then fails), whatever
 * way the test reached it. Here the violations are taken by the test, so it can say it saw them.
 */
describe('the contract check of the test suite', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Answers as a pos /v1 server (its Request-Id) that breaks the document: a balance without its
    // fields, and a status no operation declares; and as Stripe, and as a stand-in without Request-Id.
    const pos = { 'content-type': 'application/json', 'request-id': 'req_contract' };
    server = createServer((req, res) => {
      if (req.url === '/v1/balance') res.writeHead(200, pos).end('{"unexpected":true}');
      else if (req.url === '/v1/customers') res.writeHead(418, pos).end('{}');
      else if (req.url === '/v1/merchant') res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      else res.writeHead(200, { ...pos, 'stripe-version': '2025-01-01' }).end('{"object":"customer"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('records a body the document does not allow and a status it does not declare, seen through a raw fetch', async () => {
    expect((await fetch(`${url}/v1/balance`)).status).toBe(200);
    expect((await fetch(`${url}/v1/customers`)).status).toBe(418);
    const seen = takeViolations().map((v) => v.message);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toContain('retrieveBalance (GET /v1/balance) answered 200 with a body the document does not allow');
    expect(seen[1]).toContain('listCustomers (GET /v1/customers) answered 418, which the document does not declare');
  });

  it("leaves Stripe's API alone: an answer carrying Stripe-Version is the simulator's", async () => {
    expect((await fetch(`${url}/v1/customers/cus_1`)).status).toBe(200);
    expect(takeViolations()).toEqual([]);
  });

  it('leaves a stand-in server alone: an answer without the Request-Id every pos answer carries is not ours', async () => {
    expect((await fetch(`${url}/v1/merchant`)).status).toBe(502);
    expect(takeViolations()).toEqual([]);
  });

  it('records a webhook delivery of an unknown type or with a payload its type does not allow', () => {
    expect(() => checkWebhook(JSON.stringify({ id: 'evt_1', type: 'no.such.event', data: {} }))).toThrow('do not list');
    expect(() => checkWebhook(JSON.stringify({ id: 'evt_1', type: 'payment.succeeded', data: { object: 'nothing' } }))).toThrow('does not allow');
    expect(takeViolations()).toHaveLength(2);
  });
});
