import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ProcessorFailure } from '../processor/errors.js';
import { eventData } from '../webhooks/outbox.js';

describe('customers on the in-memory processor', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  async function mirrorOf(id: string) {
    const row = await d.store.db.selectFrom('customers').select('processor_customer_id').where('id', '=', id).executeTakeFirstOrThrow();
    return d.processor.customer(row.processor_customer_id ?? '');
  }

  async function events() {
    const rows = await d.store.db.selectFrom('events').select(['id', 'type', 'data']).where('type', 'like', 'customer.%').orderBy('seq').execute();
    return rows.map((r) => ({ type: r.type, data: eventData(d.cipher, r) }));
  }

  function pay(customerId: string) {
    return d.services.transactions.create(
      d.scope,
      { input: { amount: 1000, payment_method_type: 'card', confirm: false, capture_method: 'automatic', customer_id: customerId }, source: 'api', terminalId: null, response: 'transaction' },
      undefined,
    );
  }

  it('mirrors a customer on the processor as it is created and updated, with its events', async () => {
    const created = await d.services.customers.create(d.scope, { name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold' } });
    expect((await mirrorOf(created.id))?.customer).toMatchObject({ name: 'Ada', email: 'ada@example.com', metadata: { pos_customer_id: created.id, pos_merchant_id: d.scope.merchantId } });
    const updated = await d.services.customers.update(d.scope, created.reference, { email: null, phone: '+44 20 7946 0000' });
    expect(updated).toMatchObject({ name: 'Ada', email: null, phone: '+44 20 7946 0000' });
    expect((await mirrorOf(created.id))?.customer).toMatchObject({ email: null, phone: '+44 20 7946 0000' });
    // Metadata is the merchant's own: it stays here and costs no processor call.
    await d.services.customers.update(d.scope, created.id, { metadata: { tier: 'platinum' } });
    expect(d.processor.count('updateCustomer')).toBe(1);
    // An update that changes nothing is no news.
    await d.services.customers.update(d.scope, created.id, { metadata: { tier: 'platinum' } });
    expect((await events()).map((e) => [e.type, e.data.email ?? null, e.data.is_test])).toEqual([
      ['customer.created', 'ada@example.com', true],
      ['customer.updated', null, true],
      ['customer.updated', null, true],
    ]);
  });

  it('creates nothing when the processor is down', async () => {
    d.processor.failNext('createCustomer', new ProcessorFailure('connection', 'socket hang up'));
    await expect(d.services.customers.create(d.scope, { name: 'Bo' })).rejects.toMatchObject({ status: 502, code: 'processor_unavailable' });
    expect((await d.services.customers.list(d.scope, { page: 1, size: 10 })).totalCount).toBe(0);
    expect(await events()).toEqual([]);
  });

  it('passes the customer to the processor with a payment naming it', async () => {
    const customer = await d.services.customers.create(d.scope, { name: 'Cy' });
    const payment = await pay(customer.id);
    expect(payment.response.status).toBe(201);
    const intent = (await d.services.transactions.getRow(d.scope, payment.state.transactionId ?? '')).processor_payment_intent_id ?? '';
    expect(d.processor.customerOf(intent)).toBe((await mirrorOf(customer.id))?.customer.id);
  });

  it('deletes a customer: 404 afterwards, gone from the list and the processor, refused for new payments', async () => {
    const keep = await d.services.customers.create(d.scope, { name: 'Keep' });
    const gone = await d.services.customers.create(d.scope, { name: 'Gone' });
    expect(await d.services.customers.delete(d.scope, gone.reference)).toEqual({ id: gone.id, object: 'customer', deleted: true });
    expect((await mirrorOf(gone.id))?.deleted).toBe(true);
    await expect(d.services.customers.get(d.scope, gone.id)).rejects.toMatchObject({ status: 404, code: 'resource_missing' });
    await expect(d.services.customers.update(d.scope, gone.id, { name: 'Back' })).rejects.toMatchObject({ status: 404 });
    await expect(d.services.customers.delete(d.scope, gone.id)).rejects.toMatchObject({ status: 404 });
    const list = await d.services.customers.list(d.scope, { page: 1, size: 10 });
    expect(list).toMatchObject({ totalCount: 1, lastPage: 1 });
    expect(list.data.map((c) => c.id)).toEqual([keep.id]);
    const refused = await pay(gone.id);
    expect(refused.response).toMatchObject({ status: 400, body: { error: { param: 'customer_id' } } });
    expect((await events()).at(-1)).toMatchObject({ type: 'customer.deleted', data: { id: gone.id, deleted: true, is_test: true } });
  });

  it('pages the live customers newest first once some were deleted', async () => {
    const made = [];
    for (let i = 1; i <= 7; i++) made.push(await d.services.customers.create(d.scope, { name: `c${i}` }));
    for (const i of [1, 4, 6]) await d.services.customers.delete(d.scope, made[i]?.id ?? '');
    const first = await d.services.customers.list(d.scope, { page: 1, size: 3 });
    expect(first).toMatchObject({ totalCount: 4, lastPage: 2 });
    expect(first.data.map((c) => c.name)).toEqual(['c6', 'c4', 'c3']);
    expect((await d.services.customers.list(d.scope, { page: 2, size: 3 })).data.map((c) => c.name)).toEqual(['c1']);
  });
});
