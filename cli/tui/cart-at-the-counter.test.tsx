// @backend-once what the counter shows and sends as keys are pressed; the cart's storage is terminal-cart's, on both backends.
import pino from 'pino';
import { render } from 'ink-testing-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../agent/agent.js';
import { loadAgentConfig } from '../../shared/config.js';
import { frameWith } from '../../test/helpers/ink.js';
import { startTestServer, type TestServer } from '../../test/helpers/server.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { PosClient } from '../api.js';
import { AgentSource } from './agent-source.js';
import { App } from './components/App.js';

/**
 * A cart built at the counter: the counter as `pos up` runs it (its agent, the simulated "Till 1",
 * the restricted counter key) against a real server, driven by key presses; two lines typed with
 * `+`, charged as their total, tapped on the simulated reader; the payment keeps the cart the
 * reader showed (the API stores what create-payment sent as line_items, after checking the sum).
 * In this process: the terminal between staff and the counter is tui-e2e's to cross.
 */
let t: TestServer;
let agent: RunningAgent;
let owner: PosClient;
let counter: PosClient;
const agentDir = tempDir('pos-tui-cart-agent-');

beforeAll(async () => {
  t = await startTestServer();
  const { keys } = await t.merchant('Demo Shop');
  owner = new PosClient({ server: t.url, apiKey: keys.sk_test });
  // What `pos up` sets up for its demo: a location, one simulated reader, a counter key for the agent and the counter.
  await owner.createLocation({ display_name: 'Demo counter', address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' } });
  await owner.registerReader({ name: 'Till 1', registration_code: 'simulated-wpe' });
  const counterKey = (await owner.createApiKey({ name: 'pos up counter', preset: 'counter' })).data.secret ?? '';
  agent = await startAgent(loadAgentConfig({ server: t.url, apiKey: counterKey, dataDir: agentDir.path, listen: '127.0.0.1:0' }, {}), { logger: pino({ level: 'silent' }) });
  counter = new PosClient({ server: t.url, apiKey: counterKey });
});
afterAll(async () => {
  await agent?.close();
  await t?.stop();
  agentDir.cleanup();
});

describe('a cart at the counter (pos up’s agent and counter key)', () => {
  it('builds a two-line cart with +, takes one off with -, charges the total and keeps the lines on the payment', async () => {
    const source = new AgentSource(agent.url, counter);
    const ui = render(<App source={source} api={counter} color={false} />);
    try {
      await frameWith(ui, '● online');
      ui.stdin.write('+');
      await frameWith(ui, 'New line  Description: _');
      ui.stdin.write('Flat white\r');
      await frameWith(ui, 'Unit price: _');
      ui.stdin.write('4,50\r');
      await frameWith(ui, 'Quantity: _');
      ui.stdin.write('2\r');
      await frameWith(ui, 'Total   $9.00');

      // A slip: a third line taken off again with -.
      ui.stdin.write('+');
      await frameWith(ui, 'Description: _');
      ui.stdin.write('Quiche\r');
      await frameWith(ui, 'Unit price: _');
      ui.stdin.write('3\r');
      await frameWith(ui, 'Quantity: _');
      ui.stdin.write('\r');
      await frameWith(ui, 'Total   $12.00');
      ui.stdin.write('-');
      await frameWith(ui, 'Total   $9.00');

      ui.stdin.write('+');
      await frameWith(ui, 'Description: _');
      ui.stdin.write('Almond croissant\r');
      await frameWith(ui, 'Unit price: _');
      // A price the currency cannot have is refused in words; the line stays open for another try.
      ui.stdin.write('3.805\r');
      await frameWith(ui, 'has more than 2 decimals for USD');
      ui.stdin.write('\u007f');
      await frameWith(ui, 'Unit price: 3.80_');
      ui.stdin.write('\r');
      await frameWith(ui, 'Quantity: _');
      ui.stdin.write('\r');
      const cart = await frameWith(ui, 'Total   $12.80');
      expect(cart).toContain('Cart  2 lines');
      expect(cart).toMatch(/2 × Flat white\s+@\s+\$4\.50\s+\$9\.00/);
      expect(cart).toMatch(/1 × Almond croissant\s+@\s+\$3\.80\s+\$3\.80/);

      ui.stdin.write('\r');
      await frameWith(ui, 'WAITING FOR CARD on Till 1: $12.80');
      ui.stdin.write('s');
      const approved = await frameWith(ui, '✔ APPROVED  $12.80', 20_000);
      const reference = /txn_\w+/.exec(approved)?.[0];
      expect(reference).toBeTruthy();

      const listed = (await owner.listTransactions({ size: 12 })).data;
      const paid = listed.find((p) => p.reference === reference);
      expect(paid).toMatchObject({ status: 'succeeded', amount: 1280 });
      expect(paid?.cart).toEqual({
        line_items: [
          { description: 'Flat white', quantity: 2, amount: 450 },
          { description: 'Almond croissant', quantity: 1, amount: 380 },
        ],
        tax: null,
      });

      // The next sale starts with an empty cart.
      ui.stdin.write('\r');
      const next = await frameWith(ui, 'Press Enter to charge.');
      expect(next).not.toContain('Cart ');
    } finally {
      ui.unmount();
      source.stop();
    }
  });
});
