import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../test/helpers/domain.js';
import { toIsoTimestamp } from '../shared/time.js';
import type { CreatePaymentState } from './payments/transactions.js';
import { newDelivery } from './webhooks/queue.js';

const DAY = 86_400_000;

function payment(): CreatePaymentState {
  return { input: { amount: 1500, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic' }, source: 'api', terminalId: null, response: 'transaction' };
}

describe('retention', () => {
  let d: Domain;
  let keys = 0;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  /** A payment now (two events), with a finished delivery of each event completed now, and a processor event received now. */
  async function activity(endpointId: string): Promise<string> {
    const created = await d.services.transactions.create(d.scope, payment(), `key-${keys++}`);
    const events = await d.store.db.selectFrom('events').select(['id', 'seq', 'object_id']).where('object_id', '=', created.state.transactionId ?? '').execute();
    for (const e of events) {
      await d.store.db
        .insertInto('webhook_deliveries')
        .values({ ...newDelivery(e.id, endpointId, e.object_id, e.seq, false, d.clock.now()), status: 'delivered', attempts: 1, completed_at: d.clock.now() })
        .execute();
    }
    await d.store.db.insertInto('processor_events').values({ id: `evt_proc_${keys}`, mode: 'test', type: 'payment_intent.succeeded', object_id: null, received_at: d.clock.now() }).execute();
    return created.state.transactionId ?? '';
  }

  const count = async (table: 'events' | 'webhook_deliveries' | 'processor_events' | 'idempotency_keys'): Promise<number> =>
    Number((await d.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('prunes only rows past their period, and the event list says how far back it reaches', async () => {
    const endpoint = await d.services.webhookEndpoints.create(d.scope, { url: 'http://127.0.0.1:9/hook' });
    const start = d.clock.now();
    for (let i = 0; i < 3; i++) await activity(endpoint.id);
    d.clock.advance(20 * DAY);
    const kept = [await activity(endpoint.id), await activity(endpoint.id)];
    d.clock.advance(10 * DAY + 1);
    // Its idempotency key is kept 24 h: still inside its period at the prune.
    const recent = await activity(endpoint.id);
    expect(await count('events')).toBe(12);

    const report = await d.services.retention.runOnce();
    // 30 days and a millisecond after the first three payments: they went, with what hung on them.
    expect(report).toEqual({ events: 6, deliveries: 6, processorEvents: 3, idempotencyKeys: 5 });
    expect(await count('events')).toBe(6);
    expect(await count('webhook_deliveries')).toBe(6);
    expect(await count('processor_events')).toBe(3);
    const survivors = await d.store.db.selectFrom('events').select('object_id').distinct().execute();
    expect(survivors.map((r) => r.object_id).sort()).toEqual([...kept, recent].sort());
    expect((await d.store.db.selectFrom('idempotency_keys').select('key').execute()).map((r) => r.key)).toEqual([`key-${keys - 1}`]);
    // A second pass finds nothing more.
    expect(await d.services.retention.runOnce()).toEqual({ events: 0, deliveries: 0, processorEvents: 0, idempotencyKeys: 0 });

    const page1 = await d.services.events.list(d.scope, { page: 1, size: 4 });
    expect(page1).toMatchObject({ totalCount: 6, lastPage: 2, retention_days: 30, available_since: toIsoTimestamp(d.clock.now() - 30 * DAY) });
    const page2 = await d.services.events.list(d.scope, { page: 2, size: 4 });
    expect(page2.data).toHaveLength(2);
    expect([...page1.data, ...page2.data].map((e) => e.data.id).filter((id) => !kept.includes(id as string) && id !== recent)).toEqual([]);
    expect(new Date(page2.data.at(-1)?.created_at ?? '').getTime()).toBe(start + 20 * DAY);
  });
});
