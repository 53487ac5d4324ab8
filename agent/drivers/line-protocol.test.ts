import { describe, expect, it } from 'vitest';
import { LineSplitter, parseLine } from './line-protocol.js';

describe('serial line protocol', () => {
  it('parses every reader message', () => {
    expect(parseLine('HELLO model=acme-p1 serial=SN123 firmware=1.2\r')).toEqual({ ok: true, message: { verb: 'HELLO', model: 'acme-p1', serial: 'SN123', firmware: '1.2' } });
    expect(parseLine('PONG')).toEqual({ ok: true, message: { verb: 'PONG' } });
    expect(parseLine('STATE waiting_for_card')).toEqual({ ok: true, message: { verb: 'STATE', state: 'waiting_for_card' } });
    expect(parseLine('CARD brand=visa last4=4242')).toEqual({ ok: true, message: { verb: 'CARD', brand: 'visa', last4: '4242' } });
    expect(parseLine('RESULT declined code=insufficient_funds')).toEqual({ ok: true, message: { verb: 'RESULT', result: 'declined', code: 'insufficient_funds' } });
    expect(parseLine('ERR paper jam')).toEqual({ ok: true, message: { verb: 'ERR', message: 'paper jam' } });
  });

  it('rejects malformed lines without throwing', () => {
    for (const bad of ['', 'HELLO model=x', 'STATE dancing', 'CARD brand=visa last4=42', 'RESULT maybe', 'NOPE', 'HELLO model serial=1', 'x'.repeat(300), 'HELLO model=a b serial=c']) {
      expect(parseLine(bad).ok, bad).toBe(false);
    }
  });

  it('splits a stream into lines across chunks', () => {
    const s = new LineSplitter();
    expect(s.push('PO')).toEqual([]);
    expect(s.push('NG\nSTATE idle\nRES')).toEqual(['PONG', 'STATE idle']);
    expect(s.push('ULT approved\n')).toEqual(['RESULT approved']);
  });
});
