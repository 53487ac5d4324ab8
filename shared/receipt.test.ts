import { describe, expect, it } from 'vitest';
import { type ReceiptInput, receiptContent, receiptTextLines } from './receipt.js';

const base: ReceiptInput = {
  merchantName: 'Corner Café',
  address: { line1: '1 Main St', line2: null, city: 'Springfield', state: 'IL', postal_code: '62701', country: 'US' },
  reference: 'txn_ABC123',
  mode: 'live',
  simulated: false,
  currency: 'usd',
  amount: 1350,
  tip: 150,
  refunded: 0,
  paidAt: Date.UTC(2026, 10, 25, 14, 3, 9),
  timeZone: 'UTC',
  description: null,
  card: {
    brand: 'visa',
    last4: '4242',
    readMethod: 'contactless_emv',
    applicationName: 'VISA CREDIT',
    aid: 'A0000000031010',
    authorizationCode: '123456',
    responseCode: '3030',
    accountType: 'credit',
    verification: 'approval',
  },
};

const value = (lines: { key: string; value: string }[], key: string) => lines.find((l) => l.key === key)?.value;

describe('receiptContent', () => {
  it('prints what an EMV receipt must carry', () => {
    const r = receiptContent(base);
    expect(r.merchant_name).toBe('Corner Café');
    expect(r.address_lines).toEqual(['1 Main St', 'Springfield, IL 62701', 'US']);
    expect(r.notice).toBeNull();
    expect(r.status).toBe('APPROVED');
    expect(value(r.header, 'date')).toBe('2026-11-25');
    expect(value(r.header, 'time')).toBe('14:03:09 UTC');
    // A San Francisco shop's receipt reads its own clock, and its date, with the zone named.
    const local = receiptContent({ ...base, paidAt: Date.UTC(2026, 10, 26, 1, 24, 42), timeZone: 'America/Los_Angeles' });
    expect(value(local.header, 'date')).toBe('2026-11-25');
    expect(value(local.header, 'time')).toBe('17:24:42 PST');
    expect(value(r.header, 'reference')).toBe('txn_ABC123');
    expect(value(r.amounts, 'subtotal')).toBe('$12.00');
    expect(value(r.amounts, 'tip')).toBe('$1.50');
    expect(value(r.amounts, 'total')).toBe('$13.50');
    expect(value(r.card, 'card')).toBe('Visa •••• 4242');
    expect(value(r.card, 'entry_mode')).toBe('Contactless');
    expect(value(r.card, 'application')).toBe('VISA CREDIT');
    expect(value(r.card, 'aid')).toBe('A0000000031010');
    expect(value(r.card, 'authorization_code')).toBe('123456');
    expect(value(r.card, 'response_code')).toBe('3030');
    expect(value(r.card, 'account_type')).toBe('Credit');
    expect(value(r.card, 'verification')).toBe('No verification required');
  });

  it('names chip and swipe entry, and asks for a signature when the card chose one', () => {
    const chip = receiptContent({ ...base, card: { ...base.card!, readMethod: 'contact_emv', verification: 'offline_pin' } });
    expect(value(chip.card, 'entry_mode')).toBe('Chip');
    expect(value(chip.card, 'verification')).toBe('PIN verified');
    const swipe = receiptContent({ ...base, card: { ...base.card!, readMethod: 'magnetic_stripe_track2', verification: 'signature' } });
    expect(value(swipe.card, 'entry_mode')).toBe('Swipe');
    expect(swipe.footer[0]).toMatch(/signature/);
  });

  it('marks test mode and the simulator, and refunds', () => {
    expect(receiptContent({ ...base, mode: 'test' }).notice).toBe('TEST MODE: no money moved');
    expect(receiptContent({ ...base, simulated: true }).notice).toBe('SIMULATED: no money moved');
    const partly = receiptContent({ ...base, refunded: 500 });
    expect(partly.status).toBe('PARTIALLY REFUNDED');
    expect(value(partly.amounts, 'refunded')).toBe('$5.00');
    expect(receiptContent({ ...base, refunded: 1350 }).status).toBe('REFUNDED');
  });

  it('formats zero-decimal currencies and leaves out what it does not know', () => {
    const r = receiptContent({ ...base, currency: 'jpy', amount: 1200, tip: 0, address: null, paidAt: null, card: { ...base.card!, aid: null, applicationName: null, accountType: 'unknown' } });
    expect(value(r.amounts, 'total')).toBe('¥1,200');
    expect(r.address_lines).toEqual([]);
    expect(r.header.map((l) => l.key)).toEqual(['reference']);
    expect(r.card.map((l) => l.key)).toEqual(['card', 'entry_mode', 'authorization_code', 'response_code', 'verification']);
  });

  it('lays the receipt out in fixed-width text for a printer', () => {
    const text = receiptTextLines(receiptContent(base), 32);
    expect(text.every((line) => line.length <= 32)).toBe(true);
    expect(text[0]!.trim()).toBe('Corner Café');
    expect(text).toContain('AID               A0000000031010');
    expect(text.some((line) => line.trim() === 'APPROVED')).toBe(true);
  });
});
