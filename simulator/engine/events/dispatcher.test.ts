import Stripe from 'stripe';
import { expect, it } from 'vitest';
import { signPayload } from './dispatcher.js';

const stripe = new Stripe('sk_test_unused');

it('signs exactly as Stripe signs, so constructEvent verifies', () => {
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'charge.succeeded', data: { object: {} } });
  const secret = 'whsec_test_secret';
  const header = signPayload(payload, secret, Math.floor(Date.now() / 1000));
  expect(stripe.webhooks.constructEvent(payload, header, secret).id).toBe('evt_1');
  expect(header).toBe(stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Number(/t=(\d+)/.exec(header)![1]) }));
  expect(() => stripe.webhooks.constructEvent(payload.replace('evt_1', 'evt_2'), header, secret)).toThrow();
});
