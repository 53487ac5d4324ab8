import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Stripe from 'stripe';
import { expect, it } from 'vitest';
import { keySourceOf } from '../../../shared/crypto/key-source.js';
import { Keyring } from '../../../shared/crypto/keyring.js';
import { Store } from '../../store.js';
import { signPayload, WebhookDispatcher } from './dispatcher.js';

const stripe = new Stripe('sk_test_unused');

it('signs exactly as Stripe signs, so constructEvent verifies', () => {
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'charge.succeeded', data: { object: {} } });
  const secret = 'whsec_test_secret';
  const header = signPayload(payload, secret, Math.floor(Date.now() / 1000));
  expect(stripe.webhooks.constructEvent(payload, header, secret).id).toBe('evt_1');
  expect(header).toBe(stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Number(/t=(\d+)/.exec(header)![1]) }));
  expect(() => stripe.webhooks.constructEvent(payload.replace('evt_1', 'evt_2'), header, secret)).toThrow();
});

/** An event goes out only once the request that made it is durable, and after its answer. */
it('sends nothing a batch still open holds before it has committed and answered its requests', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pos-sim-dispatch-'));
  const store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
  const outside = new Database(join(dir, 'simulator.db'), { readonly: true });
  const durable = () => (outside.prepare("select 1 from objects where id = 'evt_1'").get() !== undefined ? 'durable' : 'not durable');
  const happened: string[] = [];
  // The moment a delivery leaves, not when it lands: by then the batch has committed anyway.
  const sent = () => happened.push(`sent, ${durable()}`);
  subscribe('http.client.request.start', sent);
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      happened.push(`received ${(JSON.parse(body) as { id: string }).id}, ${durable()}`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dispatcher = new WebhookDispatcher(store, () => Date.now(), () => undefined);
  try {
    const scope = { livemode: false, account: null };
    const endpoint = store.insert('webhook_endpoint', scope, { id: 'we_1', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/` }, { secret: 'whsec_1' });
    store.unit(
      () => {
        store.insert('event', scope, { id: 'evt_1', object: 'event', type: 'charge.succeeded', data: { object: {} }, pending_webhooks: 1 }, {});
        store.addDelivery('evt_1', endpoint.id, 'pending', 0);
      },
      () => happened.push(`answered, ${durable()}`),
    );
    // The request's unit has run; its batch commits after this turn. The dispatcher is woken now.
    dispatcher.poke();
    await dispatcher.idle();
    expect(happened).toEqual(['answered, durable', 'sent, durable', 'received evt_1, durable']);
  } finally {
    unsubscribe('http.client.request.start', sent);
    await dispatcher.close();
    receiver.close();
    outside.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
