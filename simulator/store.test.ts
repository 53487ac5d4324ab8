import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { Store } from './store.js';

const scope = { livemode: false, account: null };

/** `all` and the meta values are answered from memory between writes: what they answer must be what a fresh read would. */
describe("the simulator store's remembered reads", () => {
  let dir: string;
  let store: Store;
  const endpointIds = () => store.all<{ id: string; url: string }, { secret: string }>('webhook_endpoint').map((e) => `${e.id} ${e.body.url} ${e.internal.secret}`);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pos-sim-store-'));
    store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sees every insert, save and removal of the type, and nothing a rolled-back transaction wrote', () => {
    expect(endpointIds()).toEqual([]);
    const made = store.insert('webhook_endpoint', scope, { id: 'we_1', url: 'http://a' }, { secret: 'whsec_1' });
    expect(endpointIds()).toEqual(['we_1 http://a whsec_1']);
    store.save({ ...made, body: { id: 'we_1', url: 'http://b' } });
    expect(endpointIds()).toEqual(['we_1 http://b whsec_1']);

    expect(() =>
      store.transaction(() => {
        store.insert('webhook_endpoint', scope, { id: 'we_2', url: 'http://c' }, { secret: 'whsec_2' });
        // Read inside the transaction, then rolled back: the memory must not keep we_2.
        expect(endpointIds()).toHaveLength(2);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(endpointIds()).toEqual(['we_1 http://b whsec_1']);

    store.remove('we_1');
    expect(endpointIds()).toEqual([]);
  });

  it('answers a meta value as last written, and as before a rolled-back write', () => {
    expect(store.getMeta('webhook_faults')).toBeUndefined();
    store.setMeta('webhook_faults', '{"drop":true}');
    expect(store.getMeta('webhook_faults')).toBe('{"drop":true}');
    expect(() =>
      store.transaction(() => {
        store.setMeta('webhook_faults', '{"drop":false}');
        expect(store.getMeta('webhook_faults')).toBe('{"drop":false}');
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.getMeta('webhook_faults')).toBe('{"drop":true}');
  });

  it('peeks an object as a fresh read would: after every save, removal and rolled-back write of it', () => {
    const account = (id: string) => store.peek<{ id: string; charges_enabled: boolean }, { note: string }>(id);
    const shown = (id: string) => {
      const seen = account(id);
      return seen ? `${seen.body.charges_enabled} ${seen.internal.note}` : 'none';
    };
    expect(shown('acct_1')).toBe('none');
    const made = store.insert('account', scope, { id: 'acct_1', charges_enabled: false }, { note: 'new' });
    expect(shown('acct_1')).toBe('false new');
    // Kept between writes: the same object, not a parse per read.
    expect(account('acct_1')).toBe(account('acct_1'));
    store.save({ ...made, body: { id: 'acct_1', charges_enabled: true } });
    expect(shown('acct_1')).toBe('true new');
    expect(() =>
      store.transaction(() => {
        const fresh = store.find<{ id: string; charges_enabled: boolean }, { note: string }>('acct_1')!;
        store.save({ ...fresh, body: { ...fresh.body, charges_enabled: false }, internal: { note: 'rolled back' } });
        expect(shown('acct_1')).toBe('false rolled back');
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(shown('acct_1')).toBe('true new');
    store.remove('acct_1');
    expect(shown('acct_1')).toBe('none');
  });
});

/** Requests that arrive together commit together: what each caller hears must be what a crash keeps. */
describe("the simulator store's group commit", () => {
  let dir: string;
  let store: Store;
  /** Another connection to the file: it sees only what has committed. */
  let outside: Database.Database;
  const committed = () => (outside.prepare("select id from objects where type = 'customer' order by id").all() as { id: string }[]).map((row) => row.id);
  const customer = (id: string) => store.insert('customer', scope, { id }, {});
  /** Runs one request's unit and records, once its batch settles, what had committed by then. */
  const heard: { unit: string; failure: unknown; committed: string[] }[] = [];
  const request = <T>(unit: string, work: () => T): T =>
    store.unit(work, (failure) => heard.push({ unit, failure, committed: committed() }));
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pos-sim-batch-'));
    store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
    outside = new Database(join(dir, 'simulator.db'), { readonly: true });
    heard.length = 0;
  });
  afterEach(() => {
    outside.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits the units of one turn together, and tells each caller only after the commit', async () => {
    request('a', () => customer('cus_a'));
    request('b', () => customer('cus_b'));
    // Both ran, neither is durable yet: no one may have heard of them.
    expect(store.find('cus_b')?.id).toBe('cus_b');
    expect(committed()).toEqual([]);
    expect(heard).toEqual([]);
    await settled();
    expect(heard).toEqual([
      { unit: 'a', failure: undefined, committed: ['cus_a', 'cus_b'] },
      { unit: 'b', failure: undefined, committed: ['cus_a', 'cus_b'] },
    ]);
  });

  it('takes back the writes of a unit that throws, and only its own', async () => {
    request('a', () => customer('cus_a'));
    expect(() =>
      request('b', () => {
        customer('cus_b');
        throw new Error('declined');
      }),
    ).toThrow('declined');
    request('c', () => customer('cus_c'));
    await settled();
    expect(committed()).toEqual(['cus_a', 'cus_c']);
    expect(heard.map((h) => [h.unit, h.failure])).toEqual([
      ['a', undefined],
      ['b', undefined],
      ['c', undefined],
    ]);
  });

  it('forgets what a thrown unit read of its own writes', async () => {
    request('a', () => store.insert('webhook_endpoint', scope, { id: 'we_a', url: 'http://a' }, { secret: 'whsec_a' }));
    expect(() =>
      request('b', () => {
        store.insert('webhook_endpoint', scope, { id: 'we_b', url: 'http://b' }, { secret: 'whsec_b' });
        expect(store.all('webhook_endpoint')).toHaveLength(2);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.all('webhook_endpoint').map((e) => e.id)).toEqual(['we_a']);
    await settled();
  });

  it('commits an open batch, and answers its requests, before work outside requests takes its own transaction', async () => {
    request('a', () => customer('cus_a'));
    store.transaction(() => customer('cus_timer'));
    // The request was answered first, then the timer's work was durable the moment it returned.
    expect(heard).toEqual([{ unit: 'a', failure: undefined, committed: ['cus_a'] }]);
    expect(committed()).toEqual(['cus_a', 'cus_timer']);
    request('b', () => customer('cus_b'));
    expect(committed()).toEqual(['cus_a', 'cus_timer']);
    await settled();
    expect(heard.map((h) => [h.unit, h.committed])).toEqual([
      ['a', ['cus_a']],
      ['b', ['cus_a', 'cus_b', 'cus_timer']],
    ]);
  });

  it('commits an open batch when it closes', async () => {
    request('a', () => customer('cus_a'));
    store.close();
    expect(committed()).toEqual(['cus_a']);
    await settled();
    expect(heard).toEqual([{ unit: 'a', failure: undefined, committed: ['cus_a'] }]);
    store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
  });
});
