import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import type { Kernel } from '../engine/kernel.js';
import { Store } from '../store.js';
import { expandBody } from './expand.js';

const test = { livemode: false, account: null };

describe('expand[]', () => {
  let dir: string;
  let store: Store;
  let kernel: Kernel;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pos-sim-expand-'));
    store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
    // expandBody reads objects through the kernel's store, and nothing else of it.
    kernel = { store } as unknown as Kernel;
    store.insert('charge', test, { id: 'ch_1', object: 'charge', amount: 500, balance_transaction: 'txn_1' }, {});
    store.insert('balance_transaction', test, { id: 'txn_1', object: 'balance_transaction', net: 470 }, {});
    store.insert('charge', { livemode: true, account: null }, { id: 'ch_live', object: 'charge', amount: 9 }, {});
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replaces ids along each path, keeps every field in its place, and leaves the answer it was given unchanged', () => {
    const answer = { id: 'pi_1', object: 'payment_intent', latest_charge: 'ch_1', amount: 500, metadata: { a: '1' } };
    const before = JSON.stringify(answer);
    const expanded = expandBody(kernel, test, answer, ['latest_charge', 'latest_charge.balance_transaction']);
    expect(JSON.stringify(expanded)).toBe(
      JSON.stringify({
        id: 'pi_1',
        object: 'payment_intent',
        latest_charge: { id: 'ch_1', object: 'charge', amount: 500, balance_transaction: { id: 'txn_1', object: 'balance_transaction', net: 470 } },
        amount: 500,
        metadata: { a: '1' },
      }),
    );
    // The store may hand the same answer to other readers: it must read as it did.
    expect(JSON.stringify(answer)).toBe(before);
  });

  it("expands the items of a list, leaves an id of the other mode or of nothing stored as it is, and refuses a field the object lacks", () => {
    const page = { object: 'list', data: [{ id: 'pi_1', latest_charge: 'ch_1' }, { id: 'pi_2', latest_charge: 'ch_live' }, { id: 'pi_3', latest_charge: null }], has_more: false };
    const before = JSON.stringify(page);
    expect(expandBody(kernel, test, page, ['data.latest_charge'])).toEqual({
      object: 'list',
      data: [{ id: 'pi_1', latest_charge: { id: 'ch_1', object: 'charge', amount: 500, balance_transaction: 'txn_1' } }, { id: 'pi_2', latest_charge: 'ch_live' }, { id: 'pi_3', latest_charge: null }],
      has_more: false,
    });
    expect(JSON.stringify(page)).toBe(before);
    expect(() => expandBody(kernel, test, { id: 'pi_1' }, ['customer'])).toThrow('This property cannot be expanded (customer).');
    expect(() => expandBody(kernel, test, { id: 'pi_1' }, ['a.b.c.d.e'])).toThrow('You cannot expand more than 4 levels');
  });
});
