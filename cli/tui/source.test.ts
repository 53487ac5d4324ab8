import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/helpers/tmp.js';
import { PosClient } from '../api.js';
import type { Transaction } from '../../shared/api/types.js';
import { txn } from './fixtures.js';
import { PollingSource } from './source.js';
import type { Action } from './state.js';

const READER = { id: 'r-1', name: 'Till 1', processor_terminal_id: 'tmr_1', status: 'online', last_seen_at: null, location_id: 'l', serial_number: 's', model: 'm', is_test: true };

/** A fake /v1 that can be switched off, as a server restart or a pulled cable would. */
function fakeApi() {
  const state = { up: true, paths: [] as string[], status: 'pending' as Transaction['status'], bodies: {} as Record<string, unknown> };
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(url)).pathname;
    state.paths.push(path);
    if (typeof init?.body === 'string') state.bodies[path] = JSON.parse(init.body);
    if (!state.up) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:4242') });
    const body =
      path === '/v1/merchant'
        ? { data: { id: 'm', business_name: 'Shop', default_currency: 'usd', is_test: true, processor: {} } }
        : path === '/v1/terminal/readers'
          ? { data: [READER] }
          : path === '/v1/transactions'
            ? { data: [], totalCount: 0, page: 1, size: 12, lastPage: 1 }
            : { data: txn({ status: state.status, payment_intent_id: 'pi_1' }) };
    return new Response(JSON.stringify(body), { status: 200 });
  };
  return { state, api: new PosClient({ server: 'http://127.0.0.1:4242', apiKey: 'sk_test_x', fetch: fetch as typeof globalThis.fetch }) };
}


describe('PollingSource', () => {
  it('loads the merchant, readers and payments, and follows the payment being charged', async () => {
    const { state, api } = fakeApi();
    const actions: Action[] = [];
    const source = new PollingSource(api);
    source.start((a) => actions.push(a));
    try {
      await eventually(() => actions.some((a) => a.type === 'readers') || undefined);
      expect(actions[0]).toEqual({ type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' });
      source.follow('t-1');
      state.status = 'succeeded';
      await eventually(() => actions.some((a) => a.type === 'transaction' && a.transaction.status === 'succeeded') || undefined);
      expect(state.paths).toContain('/v1/transactions/t-1');
    } finally {
      source.stop();
    }
  });

  it('reports a lost connection instead of throwing, and recovers by itself', async () => {
    const { state, api } = fakeApi();
    const actions: Action[] = [];
    const source = new PollingSource(api);
    state.up = false;
    source.start((a) => actions.push(a));
    try {
      await eventually(() => actions.some((a) => a.type === 'connection' && a.status === 'lost') || undefined);
      const lost = actions.find((a) => a.type === 'connection' && a.status === 'lost') as Extract<Action, { type: 'connection' }>;
      expect(lost.error).toMatch(/cannot reach http:\/\/127\.0\.0\.1:4242: connect ECONNREFUSED/);
      state.up = true;
      await eventually(() => actions.some((a) => a.type === 'connection' && a.status === 'connected') || undefined);
      await eventually(() => actions.some((a) => a.type === 'readers') || undefined);
    } finally {
      source.stop();
    }
  });

  it('sends a cart as the line_items of the payment, and none without one', async () => {
    const { state, api } = fakeApi();
    const source = new PollingSource(api);
    const till = { id: 'r-1', processor_terminal_id: 'tmr_1', name: 'Till 1', status: 'online' as const, last_seen_at: null, activity: null, payment: null };
    try {
      const lines = [
        { description: 'Flat white', quantity: 2, amount: 450 },
        { description: 'Almond croissant', quantity: 1, amount: 380 },
      ];
      await source.startPayment(till, 1280, 'usd', lines);
      expect(state.bodies['/v1/terminal/create-payment']).toEqual({ amount: 1280, currency: 'usd', terminal_id: 'r-1', line_items: lines });
      await source.startPayment(till, 1000, 'usd');
      expect(state.bodies['/v1/terminal/create-payment']).toEqual({ amount: 1000, currency: 'usd', terminal_id: 'r-1' });
    } finally {
      source.stop();
    }
  });
});
