import { describe, expect, it } from 'vitest';
import { packJson, unpackJson } from './packed-json.js';

const payment = JSON.stringify({
  data: {
    id: 'f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc',
    object: 'transaction',
    reference: 'txn_j5BnfG5UOuQmfDHXu56U',
    status: 'succeeded',
    amount: 4750,
    description: 'Café ☕ 10 % off',
    metadata: { order: 'A-17' },
    receipt_email: null,
    created_at: '2026-11-27T05:36:57.490+00:00',
    updated_at: '2027-03-14T23:59:59.999+00:00',
  },
  client_secret: 'pi_C3mqCZeyigCPD5tpp16s6rCD_secret_YSiuQHtWqEO9y3QVtxO67uo50XwCFb5g',
});

describe('packed JSON', () => {
  it('gives back exactly the text it packed, non-ASCII included', () => {
    const packed = packJson(payment);
    expect(packed.startsWith('z2:')).toBe(true);
    expect(packed.length).toBeLessThan(payment.length);
    expect(unpackJson(packed)).toBe(payment);
  });

  it('gives back a value many times longer than the deflate window and its dictionary', () => {
    // A cart of 300 lines, each with its own id and time: ~35 KB, eight times the 4 KB window.
    const lines = Array.from({ length: 300 }, (_, i) => ({
      id: `${i.toString(16).padStart(8, '0')}-ffe4-487f-b8fc-7b0ff9b6f4dc`,
      name: `Item ${i} ${'é'.repeat(i % 7)}`,
      amount: 100 + i,
      at: new Date(Date.UTC(2026, 10, 27, 5, 36, 57, i)).toISOString().replace('Z', '+00:00'),
    }));
    const big = JSON.stringify({ data: JSON.parse(payment).data, cart: lines });
    expect(big.length).toBeGreaterThan(8 * 4096);
    const packed = packJson(big);
    expect(packed.startsWith('z2:')).toBe(true);
    expect(unpackJson(packed)).toBe(big);
  });

  it('packs ids and times in fewer characters than it did before', () => {
    // The same text packed the first way (z1:), as earlier versions stored it.
    const z1 =
      'z1:QysC0oyNTA3NjRN109JSTXRNLMzTdJMs0pJ1zZMM0tIsk8zSTFKSiS8mskyd8tLcTUP9SwNz01w8IkpNzUJxlRSwtGxibmqAXu45J6YdXqnwaMZUBUMDBVWF/LQ0JZSsppRflJIKyjGOuobmoEISa2amKM7NdQ2MdQ1NQoyMrUwtrUwt9SwtLaGKsQexs3FuoXNUamVmunOAi2lJQYGhWbFZkbMLLOgjgzNLAz1Kwgtd/S0rjQPDSir8zcxL800NIsqd3ZJM05VqAQ';
    expect(unpackJson(z1)).toBe(payment);
    expect(packJson(payment).length).toBeLessThan(z1.length - 20);
  });

  it('gives back exactly what only looks like an id or a time', () => {
    const near = JSON.stringify({
      upper: 'F325173A-FFE4-487F-B8FC-7B0FF9B6F4DC',
      inside: 'agent_f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc_drawer_7',
      longer: 'f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc0',
      notADate: '2026-02-30T00:00:00.000+00:00',
      otherZone: '2026-11-27T05:36:57.490+01:00',
      zulu: '2026-11-27T05:36:57.490Z',
      beforeEpoch: '1969-12-31T23:59:59.999+00:00',
      escaped: '"2026-11-27T05:36:57.490+00:00"',
      inText: 'paid 2026-11-27T05:36:57.490+00:00',
      padding: 'x'.repeat(200),
    });
    const packed = packJson(near);
    expect(packed.startsWith('z2:')).toBe(true);
    expect(unpackJson(packed)).toBe(near);
  });

  it('gives back ids and times wherever their dashes fall: side by side, at the ends, among other dashes and wide characters', () => {
    const id = 'f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc';
    const time = '"2026-11-27T05:36:57.490+00:00"';
    const texts = [
      `${id}${id}`,
      `"${id}"`,
      `${time}${time}`,
      `${time}${id}${time}`,
      `-${id}-`,
      `--${id.slice(0, 7)}-${id}-x-`,
      `0${id}`,
      `"é-😀-${id}-😀",${time}`,
      `"2026-02-30T00:00:00.000+00:00"${id}`,
      JSON.stringify({ range: '1-2-3-4-5-6-7-8-9', ids: [id, id.toUpperCase(), id], at: JSON.parse(time), note: 'x'.repeat(120) }),
    ];
    for (const text of texts) expect(unpackJson(packJson(text.padEnd(160, ' ')))).toBe(text.padEnd(160, ' '));
  });

  it('gives back any text made of the characters ids and times are made of, and others', () => {
    // Dashes, hex, digits, quotes and the time's punctuation, shuffled: what a hostile description or
    // metadata value could hold, where every dash starts a candidate for compaction.
    const alphabet = ['-', '-', '"', '0', '9', 'a', 'f', 'F', 'g', 'T', ':', '.', '+', 'é', '😀', 'f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc', '"2026-11-27T05:36:57.490+00:00"', '2026-11-27T05:36'];
    let state = 11;
    const next = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state;
    };
    for (let i = 0; i < 300; i++) {
      let text = '';
      while (text.length < 40 + (next() % 400)) text += alphabet[next() % alphabet.length];
      expect(unpackJson(packJson(text))).toBe(text);
    }
  });

  it('gives back every length of packed bytes, in characters that need no quoting in SQL or JSON', () => {
    // Deflated lengths of every remainder modulo 13 bits, and then some: each ends the text differently.
    let state = 7;
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647;
    for (let n = 0; n < 400; n++) {
      const note = Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(random() * 36)]).join('');
      const text = JSON.stringify({ note, padding: 'x'.repeat(400) });
      const packed = packJson(text);
      expect(packed).toMatch(/^z2:[!#-&(-[\]-~]+$/);
      expect(unpackJson(packed)).toBe(text);
    }
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

  it('unpacks a value packed with compacted ids and times, whose form must never change', () => {
    // What packJson wrote for this text as `z2:`: a changed dictionary or compaction cannot read it.
    const stored = 'z2:[:qDc_U=W*$uFki2`XxEhP3Lh|,TO]Ep/:OIKX$mNCBC]UaThr[5|HhylE,xC,{A';
    expect(unpackJson(stored)).toBe(
      '{"data":{"id":"x","object":"transaction","status":"succeeded","amount":4750,"created_at":"2026-11-27T05:36:57.490+00:00","key":"f325173a-ffe4-487f-b8fc-7b0ff9b6f4dc"}}',
    );
  });

  it('refuses a damaged value rather than giving back other text: cut short, or holding a character it never writes', () => {
    const packed = packJson(payment);
    expect(packed.startsWith('z2:')).toBe(true);
    expect(() => unpackJson(packed.slice(0, packed.length - 20))).toThrow();
    expect(() => unpackJson(`z2:${packed.slice(3, 10)}"${packed.slice(11)}`)).toThrow('outside its alphabet');
  });
});
