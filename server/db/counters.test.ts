import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { addToCounter, moveCount, nextSeq, readCount } from './counters.js';

describe('counters moved in pairs', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  const count = (name: Parameters<typeof readCount>[3]) => readCount(d.store.db, d.scope.merchantId, d.scope.mode, name);

  it('numbers rows, and adds to a counter without answering, creating each at its first use', async () => {
    const { merchantId, mode } = d.scope;
    const before = await count('customers');
    await d.store.transaction((trx) => addToCounter(trx, merchantId, mode, 'customers:deleted', 10));
    await d.store.transaction((trx) => addToCounter(trx, merchantId, mode, 'customers:deleted', -3));
    const numbers = [await d.store.transaction((trx) => nextSeq(trx, merchantId, mode, 'customers')), await d.store.transaction((trx) => nextSeq(trx, merchantId, mode, 'customers'))];
    expect(numbers).toEqual([before + 1, before + 2]);
    expect(await count('customers:deleted')).toBe(7);
  });

  it('moves one from a status to another, the second created when missing, and leaves other scopes alone', async () => {
    const { merchantId, mode } = d.scope;
    const pending = await count('transactions:pending');
    const canceled = await count('transactions:canceled');
    await d.store.transaction((trx) => moveCount(trx, merchantId, mode, 'transactions:pending', 'transactions:canceled'));
    await d.store.transaction((trx) => moveCount(trx, merchantId, mode, 'transactions:pending', 'transactions:canceled'));
    expect(await count('transactions:pending')).toBe(pending - 2);
    expect(await count('transactions:canceled')).toBe(canceled + 2);
    expect(await readCount(d.store.db, merchantId, mode === 'test' ? 'live' : 'test', 'transactions:canceled')).toBe(0);
  });
});
