import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ProcessorFailure } from '../processor/errors.js';
import { CreatePaymentLinkSchema } from '../../shared/contract/checkout.js';

describe('payment links on the in-memory processor', () => {
  let d: Domain;
  let reference: string;
  beforeEach(async () => {
    d = await openDomain();
    const created = await d.services.paymentLinks.create(d.scope, CreatePaymentLinkSchema.parse({ amount: 4200, expires_in: 3600 }), 'link-1');
    expect(created.response.status).toBe(201);
    reference = (await d.store.db.selectFrom('payment_links').select('reference').executeTakeFirstOrThrow()).reference;
  });
  afterEach(async () => {
    await d.close();
  });

  it('makes one link per key', async () => {
    const again = await d.services.paymentLinks.create(d.scope, CreatePaymentLinkSchema.parse({ amount: 999 }), 'link-1');
    expect(again.replayed).toBe(true);
    expect(await d.store.db.selectFrom('payment_links').select('id').execute()).toHaveLength(1);
  });

  it('starts a payment per customer, and reuses it when the page retries on it', async () => {
    const first = await d.services.paymentLinks.startPayment(reference, { email: 'ada@example.com' });
    expect(first.payment_intent).toMatch(/^pi_fake/);
    const retry = await d.services.paymentLinks.startPayment(reference, { email: 'ada@example.com', transaction: first.transaction });
    expect(retry).toEqual(first);
    const other = await d.services.paymentLinks.startPayment(reference, { email: 'bob@example.com' });
    expect(other.transaction).not.toBe(first.transaction);
    expect(d.processor.count('createIntent')).toBe(2);
  });

  it('passes a processor refusal to the page as the error it is', async () => {
    d.processor.failNext('createIntent', new ProcessorFailure('invalid_request', 'Your account cannot currently make live charges.', { status: 400, code: 'account_invalid' }));
    await expect(d.services.paymentLinks.startPayment(reference, { email: 'ada@example.com' })).rejects.toMatchObject({ status: 400, code: 'account_invalid' });
  });

  it('takes no payment once deactivated or expired', async () => {
    await d.services.paymentLinks.deactivate(d.scope, reference);
    await expect(d.services.paymentLinks.startPayment(reference, { email: 'ada@example.com' })).rejects.toMatchObject({ status: 410, code: 'payment_link_deactivated' });
  });
});
