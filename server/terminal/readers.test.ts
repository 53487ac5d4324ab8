import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';

describe('terminal payments on the in-memory processor', () => {
  let d: Domain;
  let reader: string;
  beforeEach(async () => {
    d = await openDomain();
    await d.services.terminal.createLocation(d.scope, { display_name: 'Till', address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' } });
    reader = (await d.services.terminal.registerReader(d.scope, { name: 'Counter', registration_code: 'simulated-wpe' })).processor_terminal_id;
  });
  afterEach(async () => {
    await d.close();
  });

  async function pending(amount = 1200): Promise<{ id: string; intent: string }> {
    const result = await d.services.terminal.createPayment(d.scope, { amount }, undefined);
    const row = await d.services.transactions.getRow(d.scope, result.state.transactionId ?? '');
    return { id: row.id, intent: row.processor_payment_intent_id ?? '' };
  }

  it('refuses a registration code the processor does not know, naming the field', async () => {
    await expect(d.services.terminal.registerReader(d.scope, { name: 'X', registration_code: 'nonsense' })).rejects.toMatchObject({ status: 400, param: 'registration_code' });
  });

  it('sends a payment to a reader, attributes it, and settles it with the tip the customer chose', async () => {
    const { id, intent } = await pending();
    expect(await d.services.terminal.processPayment(d.scope, intent, reader)).toMatchObject({ status: 'in_progress', reader_id: reader });
    const tapped = await d.services.terminal.simulatePayment(d.scope, reader, { amountTip: 300 });
    expect(tapped).toMatchObject({ status: 'succeeded', transaction_id: id });
    const row = await d.services.transactions.getRow(d.scope, id);
    expect(row).toMatchObject({ status: 'succeeded', amount: 1500, tip_amount: 300, reader_id: reader, card_brand: 'visa' });
    expect(row.receipt_url).toMatch(/^http:\/\/pos\.test\/receipts\/\w{32}$/);
  });

  it('answers reader_busy while the reader shows another payment', async () => {
    const first = await pending();
    await d.services.terminal.processPayment(d.scope, first.intent, reader);
    const second = await pending();
    await expect(d.services.terminal.processPayment(d.scope, second.intent, reader)).rejects.toMatchObject({ status: 409, code: 'reader_busy' });
  });

  it('resets the reader before canceling its payment, and says so', async () => {
    const { id, intent } = await pending();
    await d.services.terminal.processPayment(d.scope, intent, reader);
    const { row, readerReset } = await d.services.transactions.cancel(d.scope, id, undefined);
    expect(row.status).toBe('canceled');
    expect(readerReset).toEqual({ reset: true });
    expect(d.processor.count('cancelReaderAction')).toBe(1);
    expect((await d.processor.retrieveReader('test', reader))?.action).toBeNull();
  });

  it('cancels anyway when the reader cannot be reached, with a warning', async () => {
    const { id, intent } = await pending();
    await d.services.terminal.processPayment(d.scope, intent, reader);
    d.processor.failNext('retrieveReader', new Error('offline'));
    const { row, readerReset } = await d.services.transactions.cancel(d.scope, id, undefined);
    expect(row.status).toBe('canceled');
    expect(readerReset?.reset).toBe(false);
    expect(readerReset?.warning).toContain(reader);
  });

  it('sweeps pending terminal payments past their stale age', async () => {
    const { id } = await pending();
    d.clock.advance(11 * 60 * 1000);
    expect(await d.services.terminal.sweep()).toBe(1);
    expect((await d.services.transactions.getRow(d.scope, id)).status).toBe('canceled');
  });
});
