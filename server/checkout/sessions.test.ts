import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ProcessorFailure } from '../processor/errors.js';
import { CreateCheckoutSessionSchema } from '../../shared/contract/checkout.js';

/** As the route hands it over: validated, defaults applied. */
const SESSION = CreateCheckoutSessionSchema.parse({ amount: 2500, collect_email: true });

describe('checkout sessions on the in-memory processor', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  it('opens a session on an unconfirmed payment and completes it when the processor says it was paid', async () => {
    const session = await d.services.checkout.create(d.scope, SESSION);
    expect(session.status).toBe('open');
    const payment = await d.services.transactions.getRow(d.scope, session.transaction_id);
    expect(payment).toMatchObject({ status: 'pending', checkout_session_id: session.id, source: 'checkout' });
    await expect(d.services.checkout.startPayment(session.reference, {})).rejects.toMatchObject({ status: 400, param: 'email' });
    const start = await d.services.checkout.startPayment(session.reference, { email: 'ada@example.com' });
    expect(start.payment_intent).toBe(payment.processor_payment_intent_id);
    d.processor.settle(start.payment_intent, 'succeeded');
    await d.services.transactions.onIntentEvent(start.payment_intent, undefined, 'test');
    expect((await d.services.checkout.get(d.scope, session.id)).status).toBe('complete');
    await expect(d.services.checkout.startPayment(session.reference, { email: 'ada@example.com' })).rejects.toMatchObject({ status: 409, code: 'checkout_session_complete' });
  });

  it('makes no session when the processor refuses its payment, and says why', async () => {
    d.processor.failNext('createIntent', new ProcessorFailure('invalid_request', 'Amount must convert to at least 50 cents', { status: 400, code: 'amount_too_small', param: 'amount' }));
    await expect(d.services.checkout.create(d.scope, SESSION)).rejects.toMatchObject({ status: 400, code: 'amount_too_small' });
    expect(await d.store.db.selectFrom('checkout_sessions').select('id').execute()).toHaveLength(0);
  });

  it('expires a session past its time and cancels the payment it left open', async () => {
    const session = await d.services.checkout.create(d.scope, SESSION);
    d.clock.advance(25 * 60 * 60 * 1000);
    expect(await d.services.checkout.expireDue()).toBe(1);
    expect((await d.services.checkout.get(d.scope, session.id)).status).toBe('expired');
    expect((await d.services.transactions.getRow(d.scope, session.transaction_id)).status).toBe('canceled');
    await expect(d.services.checkout.startPayment(session.reference, { email: 'ada@example.com' })).rejects.toMatchObject({ status: 410, code: 'checkout_session_expired' });
  });
});
