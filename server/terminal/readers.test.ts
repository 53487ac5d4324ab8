import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { DEFAULT_READER_STATUS_MAX_AGE_MS } from './readers.js';

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
    expect((await d.processor.retrieveReader({ mode: 'test' }, reader))?.action).toBeNull();
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

  it('reads the reader before a payment only when the processor has not said it is online for longer than the max age', async () => {
    const [row] = await d.services.terminal.listReaders(d.scope);
    const terminalId = row?.id ?? '';
    const reads = () => d.processor.count('retrieveReader');
    const listed = reads();
    // Its registration said online a moment ago.
    await d.services.terminal.createPayment(d.scope, { amount: 1200, terminal_id: terminalId }, undefined);
    expect(reads()).toBe(listed);
    d.clock.advance(DEFAULT_READER_STATUS_MAX_AGE_MS + 1);
    await d.services.terminal.createPayment(d.scope, { amount: 1200, terminal_id: terminalId }, undefined);
    expect(reads()).toBe(listed + 1);
    // That read said online: believed again for the max age.
    await d.services.terminal.createPayment(d.scope, { amount: 1200, terminal_id: terminalId }, undefined);
    expect(reads()).toBe(listed + 1);
  });

  it('keeps the processor\'s latest word on a reader\'s status: one said earlier, arriving late, changes nothing', async () => {
    const row = async () => d.store.db.selectFrom('terminal_readers').selectAll().where('processor_reader_id', '=', reader).executeTakeFirstOrThrow();
    const registered = await row();
    const now = d.clock.now();
    await d.services.readerActions.onPresence(registered, 'offline', now + 10);
    await d.services.readerActions.onPresence(registered, 'online', now + 5);
    expect(await row()).toMatchObject({ processor_status: 'offline', processor_status_at: now + 10 });
    expect(d.services.readerActions.knownOnline(await row(), DEFAULT_READER_STATUS_MAX_AGE_MS)).toBe(false);
    await d.services.readerActions.onPresence(registered, 'online', now + 20);
    expect(await row()).toMatchObject({ processor_status: 'online', processor_status_at: now + 20 });
  });

  it('sweeps pending terminal payments past their stale age', async () => {
    const { id } = await pending();
    d.clock.advance(11 * 60 * 1000);
    expect(await d.services.terminal.sweep()).toBe(1);
    expect((await d.services.transactions.getRow(d.scope, id)).status).toBe('canceled');
  });

  describe('tipping and carts on the reader', () => {
    const SMART = { percentages: [15, 18, 20], fixed_amounts: [100, 200, 300], smart_tip_threshold: 1000 };

    async function tipping(): Promise<void> {
      const [location] = await d.services.terminal.listLocations(d.scope);
      await d.services.terminal.updateLocation(d.scope, location?.id ?? '', { tipping: SMART });
    }

    it('mirrors a location\'s tipping to the processor once, then updates it; off keeps the configuration', async () => {
      const [location] = await d.services.terminal.listLocations(d.scope);
      const set = await d.services.terminal.updateLocation(d.scope, location?.id ?? '', { tipping: SMART });
      expect(set.tipping).toEqual({ currency: 'usd', ...SMART });
      const off = await d.services.terminal.updateLocation(d.scope, location?.id ?? '', { tipping: null });
      expect(off.tipping).toBeNull();
      expect(d.processor.count('configureLocationTipping')).toBe(2);
      await expect(d.services.terminal.updateLocation(d.scope, '00000000-0000-4000-8000-000000000000', { tipping: null })).rejects.toMatchObject({ status: 404 });
    });

    it('the reader suggests fixed amounts under the threshold and percentages over it; the chosen tip lands in the payment', async () => {
      await tipping();
      const small = await pending(800);
      await d.services.terminal.processPayment(d.scope, small.intent, reader);
      expect(d.processor.readerScreen(reader).tipping?.kind).toBe('fixed_amounts');
      await d.services.terminal.cancelAction(d.scope, reader);

      const { id, intent } = await pending(4000);
      await d.services.terminal.processPayment(d.scope, intent, reader);
      expect(d.processor.readerScreen(reader).tipping?.options.map((o) => o.amount)).toEqual([600, 720, 800]);
      expect(d.processor.chooseTip(reader, 2)).toBe(720);
      await d.services.terminal.simulatePayment(d.scope, reader, {});
      expect(await d.services.transactions.getRow(d.scope, id)).toMatchObject({ status: 'succeeded', amount: 4720, tip_amount: 720 });
    });

    it('skip_tipping sends no tip screen; enable_customer_cancellation is on unless turned off', async () => {
      await tipping();
      const created = await d.services.terminal.createPayment(d.scope, { amount: 4000, skip_tipping: true }, undefined);
      const row = await d.services.transactions.getRow(d.scope, created.state.transactionId ?? '');
      await d.services.terminal.processPayment(d.scope, row.processor_payment_intent_id ?? '', reader);
      expect(d.processor.readerScreen(reader)).toMatchObject({ tipping: null, config: { skipTipping: true, enableCustomerCancellation: true } });
      d.processor.customerCancel(reader);
      expect((await d.processor.retrieveReader({ mode: 'test' }, reader))?.action).toMatchObject({ status: 'failed', failureCode: 'customer_canceled' });
      expect((await d.services.transactions.getRow(d.scope, row.id)).status).toBe('pending');
    });

    it('shows the cart before the payment, with tips suggested on the amount before tax', async () => {
      await tipping();
      const created = await d.services.terminal.createPayment(d.scope, { amount: 4400, line_items: [{ description: 'Cake', quantity: 2, amount: 2000 }], tax: 400 }, undefined);
      const row = await d.services.transactions.getRow(d.scope, created.state.transactionId ?? '');
      expect(JSON.parse(row.terminal_options ?? '{}')).toMatchObject({ line_items: [{ description: 'Cake', quantity: 2, amount: 2000 }], tax: 400 });
      await d.services.terminal.processPayment(d.scope, row.processor_payment_intent_id ?? '', reader);
      const screen = d.processor.readerScreen(reader);
      expect(screen.cart).toEqual({ currency: 'usd', lineItems: [{ description: 'Cake', quantity: 2, amount: 2000 }], tax: 400, total: 4400 });
      expect(screen.tipping).toMatchObject({ kind: 'percentages', eligible_amount: 4000 });
      expect(d.processor.calls.map((c) => c.call).filter((c) => c === 'setReaderDisplay' || c === 'processPaymentIntent')).toEqual(['setReaderDisplay', 'processPaymentIntent']);
    });
  });
});
