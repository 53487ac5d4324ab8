import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { listenSecret, newSigningSecret, signedHeaders } from './webhook-signing.js';

describe('webhook signing', () => {
  it('is verified by the standardwebhooks package, with either secret during a roll', () => {
    const oldSecret = newSigningSecret();
    const newSecret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'payment.succeeded', data: { amount: 50 } });
    const headers = signedHeaders([newSecret, oldSecret], 'evt_1', Date.now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(newSecret).verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
    expect(new Webhook(oldSecret).verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(newSecret).verify(`${body} `, { ...headers })).toThrow();
  });

  it('derives a stable listen secret per API key', () => {
    expect(listenSecret('sk_test_a')).toBe(listenSecret('sk_test_a'));
    expect(listenSecret('sk_test_a')).not.toBe(listenSecret('sk_test_b'));
    expect(listenSecret('sk_test_a')).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  });
});
