import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { PROCESSOR_CONNECT_EVENTS, PROCESSOR_EVENTS } from '../shared/processor-events.js';
import { startSimulator } from '../simulator/index.js';
import { makeClient } from '../simulator/testing/harness.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const WEBHOOK_URL = 'http://127.0.0.1:4242/processor/webhooks';

/** `pos simulator env` on `dataDir`: its KEY=value lines as a map. */
async function simulatorEnv(dataDir: string): Promise<Map<string, string>> {
  const r = await runCli(['simulator', 'env', '--data-dir', dataDir, '--port', '12111', '--webhook-url', WEBHOOK_URL]);
  expect(r.status, r.stderr).toBe(0);
  return new Map(
    r.stdout
      .split('\n')
      .map((line) => /^([A-Z_]+)=(.*)$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
}

/** The simulator's test-mode webhook endpoints at the servers' URL, read through Stripe's API with the printed key. */
async function endpointsAt(dataDir: string, secretKey: string): Promise<{ events: string[]; connect: boolean }[]> {
  const sim = await startSimulator({ dataDir: join(dataDir, 'simulator'), port: 0, keyring: new Keyring(keySourceOf({ dataDir })) });
  try {
    const listed = await makeClient(sim, secretKey).webhookEndpoints.list({ limit: 100 });
    return listed.data.filter((e) => e.url === WEBHOOK_URL).map((e) => ({ events: e.enabled_events, connect: e.description?.includes('connected accounts') ?? false }));
  } finally {
    await sim.close();
  }
}

describe('pos simulator env', () => {
  const dir = tempDir('pos-simulator-env-');
  afterAll(() => dir.cleanup());

  it('subscribes the servers’ endpoints to the events a pos server handles, no others, and prints the same secrets again', async () => {
    const first = await simulatorEnv(dir.path);
    const endpoints = await endpointsAt(dir.path, first.get('STRIPE_SECRET_KEY_TEST')!);
    expect(endpoints).toHaveLength(2);
    expect(endpoints.find((e) => !e.connect)?.events).toEqual([...PROCESSOR_EVENTS]);
    expect(endpoints.find((e) => e.connect)?.events).toEqual([...PROCESSOR_CONNECT_EVENTS]);
    // An event no pos server handles is not among them: the simulator would send it for nothing.
    expect(endpoints.flatMap((e) => e.events)).not.toContain('payment_intent.created');
    expect(endpoints.flatMap((e) => e.events)).not.toContain('*');

    const again = await simulatorEnv(dir.path);
    expect(again.get('STRIPE_WEBHOOK_SECRET_TEST')).toBe(first.get('STRIPE_WEBHOOK_SECRET_TEST'));
    expect(again.get('STRIPE_WEBHOOK_SECRET_CONNECT_TEST')).toBe(first.get('STRIPE_WEBHOOK_SECRET_CONNECT_TEST'));
    expect(await endpointsAt(dir.path, again.get('STRIPE_SECRET_KEY_TEST')!)).toHaveLength(2);
  });

  it('narrows an endpoint made for every event to the servers’ events, keeping its secret', async () => {
    const state = tempDir('pos-simulator-env-wide-');
    try {
      // State from before the events were narrowed: an endpoint at the servers' URL for every event.
      const sim = await startSimulator({ dataDir: join(state.path, 'simulator'), port: 0, keyring: new Keyring(keySourceOf({ dataDir: state.path })) });
      let secret: string;
      try {
        secret = (await sim.control.webhookEndpointFor(WEBHOOK_URL, false, false, ['*'])).secret;
      } finally {
        await sim.close();
      }
      const env = await simulatorEnv(state.path);
      expect(env.get('STRIPE_WEBHOOK_SECRET_TEST')).toBe(secret);
      const platform = (await endpointsAt(state.path, env.get('STRIPE_SECRET_KEY_TEST')!)).find((e) => !e.connect);
      expect(platform?.events).toEqual([...PROCESSOR_EVENTS]);
    } finally {
      state.cleanup();
    }
  });
});
