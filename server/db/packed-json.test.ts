import { describe, expect, it } from 'vitest';
import { packJson, unpackJson } from './packed-json.js';

const payment = JSON.stringify({
  data: { id: 'f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc', object: 'transaction', reference: 'txn_j5BnfG5UOuQmfDHXu56U', status: 'succeeded', amount: 4750, description: 'Café ☕ 10 % off', metadata: { order: 'A-17' }, receipt_email: null },
  client_secret: 'pi_C3mqCZeyigCPD5tpp16s6rCD_secret_YSiuQHtWqEO9y3QVtxO67uo50XwCFb5g',
});

describe('packed JSON', () => {
  it('gives back exactly the text it packed, non-ASCII included', () => {
    const packed = packJson(payment);
    expect(packed.startsWith('z1:')).toBe(true);
    expect(packed.length).toBeLessThan(payment.length);
    expect(unpackJson(packed)).toBe(payment);
  });

  it('keeps as it is what would not shrink, and reads JSON stored before packing as it is', () => {
    expect(packJson('{}')).toBe('{}');
    expect(packJson('null')).toBe('null');
    expect(unpackJson(payment)).toBe(payment);
    expect(unpackJson('{"a":1}')).toBe('{"a":1}');
  });

  it('unpacks a value packed with the first dictionary, which must never change', () => {
    // What packJson wrote for this text with the first dictionary: a changed dictionary cannot read it.
    const stored = 'z1:QysCKnCXAVjzNywFmpibGtTWAgA';
    expect(unpackJson(stored)).toBe('{"data":{"id":"x","object":"transaction","status":"succeeded","amount":4750}}');
  });
});
