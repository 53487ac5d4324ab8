import { describe, expect, it } from 'vitest';
import { openStore } from '../server/db/store.js';
import { backendFlags, seedDataDir } from './helpers/db.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { systemClock } from '../shared/time.js';
import { client } from './helpers/api.js';
import { startReceiver } from './helpers/receiver.js';
import { spawnServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

// A short receiver timeout keeps the claim lease short: on PostgreSQL a killed worker's claims are
// not released at start-up (another instance may hold them) but run out after timeout + 5 s.
const FAST = ['--webhook-retry-scale', '0.001', '--webhook-timeout-ms', '2000'];

describe('webhook delivery across a crash', () => {
  // On PostgreSQL the restarted server waits out the killed one's leases (timeout + margins, about
  // 9 s) before it sends again: under a loaded machine that alone approached the default 30 s.
  it('delivers every event after the server is SIGKILLed with deliveries pending and restarted', { timeout: 90_000 }, async () => {
    const dir = tempDir();
    seedDataDir(dir.path);
    const store = await openStore({ dataDir: dir.path, ...backendFlags(dir.path) });
    const { keys } = await createMerchant(store, systemClock, { businessName: 'Crash Shop' });
    await store.close();
    const r = await startReceiver();
    r.answer = () => 503;
    let first = await spawnServer(dir.path, FAST);
    try {
      const api = client(first.url, keys.sk_test);
      expect((await api.post('/v1/webhook-endpoints', { url: r.url })).status).toBe(201);
      for (let i = 0; i < 5; i += 1) {
        expect((await api.post('/v1/transactions', { amount: 900 + i, payment_method: 'pm_card_visa', confirm: true })).status).toBe(201);
      }
      const events = await eventually(async () => {
        const res = await api.get<{ data: { id: string }[] }>('/v1/events?size=100');
        return res.body.data.length === 10 ? res.body.data.map((e) => e.id) : undefined;
      });
      await eventually(() => (r.received.length >= 10 ? true : undefined));
      first.child.kill('SIGKILL');
      await first.exited;
      expect(r.acceptedIds()).toEqual([]);

      r.answer = () => 200;
      first = await spawnServer(dir.path, FAST);
      await eventually(() => (new Set(r.acceptedIds()).size === 10 ? true : undefined), 60_000);
      expect(new Set(r.acceptedIds())).toEqual(new Set(events));
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    } finally {
      first.child.kill('SIGKILL');
      await r.close();
      dir.cleanup();
    }
  });
});
