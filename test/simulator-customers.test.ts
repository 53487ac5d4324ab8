import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, startTestSimulator, rejected } from '../simulator/testing/harness.js';

/** Customers through the real `stripe` package: the lifecycle, its events, and PaymentIntents naming one. */

let t: TestSimulator;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestSimulator();
  receiver = await new WebhookReceiver().start();
  await t.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['customer.created', 'customer.updated', 'customer.deleted'] });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

function eventsFor(customer: string): Stripe.Event[] {
  return receiver.received.filter((w) => w.event.data.object.id === customer).map((w) => w.event as unknown as Stripe.Event);
}

describe('customers', () => {
  it('create, retrieve, update, list and delete, each with its event', async () => {
    const created = await t.stripe.customers.create({
      name: 'Jenny Rosen',
      email: 'jenny@example.com',
      phone: '+15555550100',
      description: 'Regular',
      metadata: { loyalty: 'gold' },
      address: { line1: '1 Main St', city: 'Springfield', country: 'US' },
    });
    expect(created.id).toMatch(/^cus_[A-Za-z0-9]{14}$/);
    expect(created).toMatchObject({
      object: 'customer',
      name: 'Jenny Rosen',
      email: 'jenny@example.com',
      phone: '+15555550100',
      description: 'Regular',
      metadata: { loyalty: 'gold' },
      livemode: false,
      balance: 0,
      delinquent: false,
    });
    expect(created.address).toMatchObject({ line1: '1 Main St', city: 'Springfield', country: 'US', postal_code: null });
    expect(await t.stripe.customers.retrieve(created.id)).toEqual(created);

    const updated = await t.stripe.customers.update(created.id, { email: 'jenny@example.org', metadata: { loyalty: '', visits: '3' } });
    expect(updated).toMatchObject({ email: 'jenny@example.org', name: 'Jenny Rosen', metadata: { visits: '3' } });
    const cleared = await t.stripe.customers.update(created.id, { description: '' });
    expect(cleared.description).toBeNull();

    const listed = await t.stripe.customers.list({ email: 'jenny@example.org' });
    expect(listed.data.map((c) => c.id)).toEqual([created.id]);

    const deleted = await t.stripe.customers.del(created.id);
    expect(deleted).toEqual(expect.objectContaining({ id: created.id, object: 'customer', deleted: true }));
    expect(await t.stripe.customers.retrieve(created.id)).toEqual(expect.objectContaining({ id: created.id, object: 'customer', deleted: true }));
    expect((await t.stripe.customers.list({ limit: 100 })).data.map((c) => c.id)).not.toContain(created.id);
    const again = await rejected(t.stripe.customers.update(created.id, { name: 'Ghost' }));
    expect(again.statusCode).toBe(404);
    expect(again.code).toBe('resource_missing');
    expect((await rejected(t.stripe.customers.del(created.id))).code).toBe('resource_missing');

    await t.sim.control.webhooksIdle();
    const events = eventsFor(created.id);
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.updated', 'customer.deleted']);
    expect(events[1]!.data.previous_attributes).toEqual({ email: 'jenny@example.com', metadata: { loyalty: 'gold' } });
    expect(events[2]!.data.previous_attributes).toEqual({ description: 'Regular' });
    expect((events[3]!.data.object as Stripe.Customer).email).toBe('jenny@example.org');
  });

  it('a PaymentIntent names an existing customer; a deleted or unknown one is resource_missing', async () => {
    const customer = await t.stripe.customers.create({ name: 'Regular' });
    const pi = await t.stripe.paymentIntents.create({ amount: 1_200, currency: 'usd', customer: customer.id, payment_method: 'pm_card_visa', confirm: true });
    expect(pi.customer).toBe(customer.id);
    expect((await t.stripe.charges.retrieve(String(pi.latest_charge))).customer).toBe(customer.id);
    expect((await t.stripe.paymentIntents.list({ customer: customer.id })).data.map((p) => p.id)).toEqual([pi.id]);

    await t.stripe.customers.del(customer.id);
    for (const id of [customer.id, 'cus_DoesNotExist00']) {
      const refused = await rejected(t.stripe.paymentIntents.create({ amount: 1_200, currency: 'usd', customer: id }));
      expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(refused.code).toBe('resource_missing');
      expect(refused.param).toBe('customer');
    }
  });

  it('customers are isolated by mode and account', async () => {
    const testCustomer = await t.stripe.customers.create({ email: 'test@example.com' });
    const fromLive = await rejected(t.live.customers.retrieve(testCustomer.id));
    expect(fromLive.code).toBe('resource_missing');
    expect(fromLive.message).toContain('test mode');
    expect((await rejected(t.live.paymentIntents.create({ amount: 1_000, currency: 'usd', customer: testCustomer.id }))).code).toBe('resource_missing');

    const account = await t.stripe.accounts.create({ type: 'custom', country: 'US', capabilities: { card_payments: { requested: true }, transfers: { requested: true } } });
    const onAccount = await t.stripe.customers.create({ name: 'Shop customer' }, { stripeAccount: account.id });
    expect((await rejected(t.stripe.customers.retrieve(onAccount.id))).code).toBe('resource_missing');
    expect((await t.stripe.customers.list({}, { stripeAccount: account.id })).data.map((c) => c.id)).toEqual([onAccount.id]);
  });
});
