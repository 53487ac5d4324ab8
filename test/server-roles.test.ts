import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../shared/config.js';
import type { Stack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { systemClock } from '../shared/time.js';
import { client } from './helpers/api.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startRoleStacks, type RoleStacks } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * `pos server --role api|worker`: API instances run no background loop, workers deliver webhooks
 * and reconcile and serve only the operational endpoints. In process, on one PostgreSQL schema and
 * one standalone simulator shared as Stripe would be.
 */
describe('server roles need what makes them safe', () => {
  it('refuses api and worker roles on the embedded store and on an embedded simulator', () => {
    expect(() => loadServerConfig({ role: 'api' }, {})).toThrow(/--role api needs PostgreSQL/);
    expect(() => loadServerConfig({ role: 'worker', databaseUrl: 'postgres://x@h/db' }, {})).toThrow(/--role worker needs one processor shared by every instance/);
    expect(loadServerConfig({}, {}).role).toBe('all');
    expect(loadServerConfig({}, { POS_ROLE: 'api', DATABASE_URL: 'postgres://x@h/db', POS_PROCESSOR: 'stripe' }).role).toBe('api');
  });
});

if (!TEST_DATABASE_URL) console.info('server-roles: the api/worker run skipped, POS_TEST_DATABASE_URL is not set (the PostgreSQL pass of npm test runs it)');

describe.skipIf(!TEST_DATABASE_URL)('an api instance and two workers on one PostgreSQL database', () => {
  const dir = tempDir('pos-roles-');
  const simDir = tempDir('pos-roles-sim-');
  let stacks: RoleStacks | undefined;
  let api: Stack;
  let workers: Stack[] = [];
  let receiver: Receiver;
  let key: string;

  beforeAll(async () => {
    // A short interval: an API instance that ran the reconciler would show it within the window below.
    stacks = await startRoleStacks(dir.path, simDir.path, { reconcileIntervalMs: 100, webhookRetryScale: 0.01 }, { authorizationDelayMs: 50 });
    ({ api, workers } = stacks);
    await stacks.platform.webhookEndpoints.update(stacks.hook.id, { url: `${api.server.url}/processor/webhooks` });
    key = (await createMerchant(api.server.store, systemClock, { businessName: 'Split Roles' })).keys.sk_test;
    receiver = await startReceiver();
    const made = await client(api.server.url, key).post('/v1/webhook-endpoints', { url: receiver.url });
    expect(made.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await stacks?.close();
    dir.cleanup();
    simDir.cleanup();
  });

  /** Statements the store of `stack` sends in a window of `ms` with no request arriving at it. */
  async function statementsIn(stack: Stack, ms: number): Promise<number> {
    const before = stack.server.store.statements();
    await new Promise((r) => setTimeout(r, ms));
    return stack.server.store.statements() - before;
  }

  it('delivers every webhook exactly once from the workers while the api instance sends its database nothing on its own', async () => {
    // Before any traffic: the workers' loops run (a 100 ms reconciler), the api instance is silent.
    const [apiIdle, ...workersIdle] = await Promise.all([api, ...workers].map((s) => statementsIn(s, 1_000)));
    expect(apiIdle).toBe(0);
    expect(workersIdle.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    const shop = client(api.server.url, key);
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => shop.post<{ data: { id: string } }>('/v1/transactions', { amount: 1_100 + i, payment_method: 'pm_card_visa', confirm: true })));
    expect(made.map((r) => r.status)).toEqual(Array<number>(8).fill(201));
    const ids = new Set(made.map((r) => r.body.data.id));
    // Two events a payment (created, succeeded), each delivered by one of the workers.
    const ours = () => receiver.received.filter((r) => ids.has(String((r.event.data as { id?: string }).id)));
    await eventually(() => (ours().length >= 16 ? true : undefined), 20_000);
    await new Promise((r) => setTimeout(r, 500));
    const events = ours().map((r) => r.event.id);
    expect(events).toHaveLength(16);
    expect(new Set(events).size).toBe(16);
    expect(api.server.reconciler.stats.passes).toBe(0);
    // The processor's own events keep reaching the api instance for a moment (requests, not
    // background work); once the processor has delivered them it goes quiet again, which a loop of
    // its own would never let it. Each look waits for the processor's deliveries to be done first.
    await eventually(
      async () => {
        await stacks!.sim.control.webhooksIdle();
        return (await statementsIn(api, 1_000)) === 0 ? true : undefined;
      },
      15_000,
      0,
    );
  });

  it('serves only the operational endpoints on a worker', async () => {
    const worker = client(workers[0]!.server.url, key);
    expect((await worker.get('/healthz')).status).toBe(200);
    expect((await worker.get('/v1/merchant')).status).toBe(404);
    expect((await worker.get('/checkout/cs_x')).status).toBe(404);
    expect((await client(api.server.url, key).get('/v1/merchant')).status).toBe(200);
  });
});
