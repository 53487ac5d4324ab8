import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { nextSeq } from '../db/counters.js';
import type { Scope } from '../accounts/scope.js';
import { recordEvent } from './outbox.js';

describe('events of unknown mode (spec §6.6)', () => {
  let d: Domain;
  let live: Scope;
  beforeEach(async () => {
    d = await openDomain();
    live = { ...d.scope, mode: 'live' };
  });
  afterEach(async () => {
    await d.close();
  });

  /** An event as stored before events carried is_test: its data does not say its mode. */
  async function legacyEvent(scope: Scope, id: string): Promise<void> {
    await d.store.transaction(async (trx) => {
      const seq = await nextSeq(trx, scope.merchantId, scope.mode, 'events');
      await trx
        .insertInto('events')
        .values({ id, merchant_id: scope.merchantId, mode: scope.mode, seq, type: 'customer.created', object_id: 'c-legacy', data: JSON.stringify({ id: 'c-legacy', name: 'Old' }), created_at: d.clock.now() })
        .execute();
    });
  }

  it('lists an event without is_test as of unknown mode, and the others as what they say', async () => {
    await legacyEvent(live, 'evt_legacyLive1');
    await d.store.transaction((trx) => recordEvent(trx, live, 'customer.created', 'c-new', { id: 'c-new' }, d.clock.now()));
    const list = await d.services.events.list(live, { page: 1, size: 10 });
    expect(list.data.map((e) => [e.id === 'evt_legacyLive1' ? 'legacy' : 'new', e.mode])).toEqual([
      ['new', 'live'],
      ['legacy', 'unknown'],
    ]);
    expect(await d.services.events.get(live, 'evt_legacyLive1')).toMatchObject({ mode: 'unknown', deliveries: [] });
  });

  it('never delivers it to a live endpoint, not even as a resend', async () => {
    const endpoint = await d.services.webhookEndpoints.create(live, { url: 'https://hooks.example.com/pos' });
    await legacyEvent(live, 'evt_legacyLive2');
    const known = await d.store.transaction((trx) => recordEvent(trx, live, 'customer.created', 'c-new', { id: 'c-new' }, d.clock.now()));
    expect(await d.services.webhookQueue.fanOut()).toBe(1);
    const deliveries = await d.store.db.selectFrom('webhook_deliveries').select(['event_id', 'endpoint_id']).execute();
    expect(deliveries).toEqual([{ event_id: known, endpoint_id: endpoint.id }]);
    await expect(d.services.events.resend(live, 'evt_legacyLive2', endpoint.id)).rejects.toMatchObject({ status: 409, code: 'event_mode_unknown' });
  });

  it('still delivers it to a test endpoint of its own scope: only live ones are refused', async () => {
    const endpoint = await d.services.webhookEndpoints.create(d.scope, { url: 'http://localhost:3000/hooks' });
    await legacyEvent(d.scope, 'evt_legacyTest1');
    expect(await d.services.webhookQueue.fanOut()).toBe(1);
    expect(await d.store.db.selectFrom('webhook_deliveries').select(['event_id', 'endpoint_id']).execute()).toEqual([{ event_id: 'evt_legacyTest1', endpoint_id: endpoint.id }]);
  });
});

describe('waking the webhook fan-out', () => {
  let d: Domain;
  let heard = 0;
  let unsubscribe: () => void;
  beforeEach(async () => {
    d = await openDomain();
    unsubscribe = d.store.notifications.subscribe({ topic: 'webhook_fanout' }, () => heard++);
    // On PostgreSQL the listening connection opens now, and wakes its listeners once when it does.
    await new Promise((resolve) => setTimeout(resolve, 200));
  });
  afterEach(async () => {
    unsubscribe();
    await d.close();
  });

  /** How many `webhook_fanout` notices one committed event gives. */
  async function fanoutNotices(): Promise<number> {
    heard = 0;
    await d.store.transaction((trx) => recordEvent(trx, d.scope, 'customer.created', 'c-1', { id: 'c-1' }, d.clock.now()));
    // Delivered after the commit, on a turn of its own on either database.
    await new Promise((resolve) => setTimeout(resolve, 100));
    return heard;
  }

  const cursorAt = (lastSeq: number) =>
    d.store.db
      .insertInto('webhook_cursors')
      .values({ merchant_id: d.scope.merchantId, mode: d.scope.mode, last_seq: lastSeq })
      .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doUpdateSet({ last_seq: lastSeq }))
      .execute();

  it('is woken for an event its fan-out has yet to see, and not for one no endpoint can want', async () => {
    // No cursor yet: the worker makes it.
    expect(await fanoutNotices()).toBe(1);
    // Caught up, no endpoint: the event moves the cursor itself and nobody is woken.
    await cursorAt(1);
    expect(await fanoutNotices()).toBe(0);
    expect(Number((await d.store.db.selectFrom('webhook_cursors').select('last_seq').executeTakeFirstOrThrow()).last_seq)).toBe(2);
    // A backlog behind the cursor: the worker fans it out, this event with it.
    await cursorAt(0);
    expect(await fanoutNotices()).toBe(1);
  });
});
