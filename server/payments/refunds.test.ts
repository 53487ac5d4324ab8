import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ProcessorFailure } from '../processor/errors.js';

describe('refunds on the in-memory processor', () => {
  let d: Domain;
  let paid: string;
  beforeEach(async () => {
    d = await openDomain();
    const created = await d.services.transactions.create(
      d.scope,
      { input: { amount: 1000, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic' }, source: 'api', terminalId: null, response: 'transaction' },
      undefined,
    );
    paid = created.state.transactionId ?? '';
  });
  afterEach(async () => {
    await d.close();
  });

  async function txn() {
    return d.services.transactions.getRow(d.scope, paid);
  }

  it('refunds part, then the rest, moving the payment to partially refunded, then refunded', async () => {
    const first = await d.services.refunds.create(d.scope, paid, { amount: 300 }, undefined);
    expect(first.response.status).toBe(201);
    expect(await txn()).toMatchObject({ status: 'partially_refunded', amount_refunded: 300, amount_refund_pending: 0 });
    await d.services.refunds.create(d.scope, paid, {}, undefined);
    expect(await txn()).toMatchObject({ status: 'refunded', amount_refunded: 1000 });
    const more = await d.services.refunds.create(d.scope, paid, { amount: 1 }, undefined);
    expect(more.response).toMatchObject({ status: 409, body: { error: { code: 'already_refunded' } } });
  });

  it('never refunds more than was paid, however many refunds race', async () => {
    const results = await Promise.all([400, 400, 400].map((amount) => d.services.refunds.create(d.scope, paid, { amount }, undefined)));
    expect(results.filter((r) => r.response.status === 201)).toHaveLength(2);
    expect(results.find((r) => r.response.status !== 201)?.response).toMatchObject({ status: 400, body: { error: { code: 'amount_too_large' } } });
    expect(await txn()).toMatchObject({ amount_refunded: 800, amount_refund_pending: 0 });
  });

  it('fails a refund the processor refuses and frees its amount', async () => {
    d.processor.failNext('createRefund', new ProcessorFailure('invalid_request', 'Charge already refunded', { status: 400, code: 'charge_already_refunded' }));
    const refused = await d.services.refunds.create(d.scope, paid, { amount: 500 }, 'r1');
    expect(refused.response).toMatchObject({ status: 400, body: { error: { code: 'charge_already_refunded' } } });
    expect(await txn()).toMatchObject({ status: 'succeeded', amount_refund_pending: 0, amount_refunded: 0 });
    const refund = await d.store.db.selectFrom('refunds').select(['status']).execute();
    expect(refund).toEqual([{ status: 'failed' }]);
  });

  it('holds a pending refund’s amount until the processor settles it', async () => {
    d.processor.refundStatus = 'pending';
    await d.services.refunds.create(d.scope, paid, { amount: 600 }, undefined);
    expect(await txn()).toMatchObject({ status: 'succeeded', amount_refund_pending: 600 });
    expect((await d.services.refunds.create(d.scope, paid, { amount: 500 }, undefined)).response.body).toMatchObject({ error: { code: 'amount_too_large' } });
    const row = await d.store.db.selectFrom('refunds').select('processor_refund_id').executeTakeFirstOrThrow();
    const settled = { ...(await d.processor.retrieveRefund({ mode: 'test' }, row.processor_refund_id ?? '')), status: 'succeeded' };
    await d.services.refunds.onProcessorRefund(settled);
    await d.services.refunds.onProcessorRefund(settled);
    expect(await txn()).toMatchObject({ status: 'partially_refunded', amount_refund_pending: 0, amount_refunded: 600 });
  });
});
