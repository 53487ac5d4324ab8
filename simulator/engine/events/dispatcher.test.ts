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
it('commits a batch still open, and answers its requests, before it reads what to deliver', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pos-sim-dispatch-'));
  const store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
  const outside = new Database(join(dir, 'simulator.db'), { readonly: true });
  const received: { id: string; committed: boolean }[] = [];
  /** Whether the event was durable when its request was answered, per answer. */
  const answered: boolean[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const id = (JSON.parse(body) as { id: string }).id;
      received.push({ id, committed: outside.prepare('select 1 from objects where id = ?').get(id) !== undefined });
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
      () => answered.push(outside.prepare("select id from objects where id = 'evt_1'").get() !== undefined),
    );
    // The request's unit has run; its batch commits after this turn. The dispatcher, woken now,
    // must not send what the batch holds before it is durable and the request answered.
    dispatcher.poke();
    expect(answered).toEqual([true]);
    expect(received).toEqual([]);
    await dispatcher.idle();
    expect(received).toEqual([{ id: 'evt_1', committed: true }]);
  } finally {
    await dispatcher.close();
    receiver.close();
    outside.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
