import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { POS_BIN, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { Tmux } from './helpers/tmux.js';
import { haveTmux } from './helpers/tools.js';

// @backend-once what the counter's terminal shows (tmux); the day's figures are the report's, on both backends.

/**
 * The close-out's drawer count at the counter, for real: `pos tui` in an 80×24 tmux terminal on a
 * server with the day's cash sales; staff press k on the day view, type the opening float and the
 * cash counted, and read what the drawer should hold and whether it is over, short or balanced.
 */
const hasTmux = haveTmux();
const tmux = new Tmux();
const S = 'close-out';

let t: TestServer;
let m: CreatedMerchant;

describe.skipIf(!hasTmux)('counting the drawer on the day view (tmux, pos tui)', () => {
  beforeAll(async () => {
    t = await startTestServer();
    m = await t.merchant('Drawer Deli');
    const api = client(t.url, m.keys.sk_test);
    for (const amount of [1275, 500]) {
      const res = await api.post('/v1/transactions', { amount, payment_method_type: 'cash' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    tmux.start(S, [`POS_CONFIG_DIR=${THROWAWAY_CONFIG_DIR}`, process.execPath, POS_BIN, 'tui', '--server', t.url, '--api-key', m.keys.sk_test]);
    await tmux.waitFor(S, 'Press Enter to charge.', 25_000);
  });
  afterAll(async () => {
    tmux.kill();
    await t?.stop();
  });

  it('takes the float and the counted cash ("7,50" style) and shows the expected cash and short, over or balanced', async () => {
    tmux.keys(S, 'd');
    await tmux.waitFor(S, 'Cash: 2 paid ($17.75)');
    expect(await tmux.waitFor(S, 'Expected in drawer: $17.75')).toContain('k count the drawer');

    tmux.keys(S, 'k');
    await tmux.waitFor(S, 'Opening float  _');
    tmux.burst(S, '100');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Counted cash  _');
    tmux.burst(S, '117,50');
    tmux.keys(S, 'Enter');
    const short = await tmux.waitFor(S, 'Counted: $117.50, short by $0.25');
    expect(short).toContain('Expected in drawer: $117.75 (float $100.00)');

    // Counted again: the float is offered as given, Enter keeps it.
    tmux.keys(S, 'k');
    await tmux.waitFor(S, 'Opening float  100.00_');
    tmux.keys(S, 'Enter');
    tmux.burst(S, '120');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Counted: $120.00, over by $2.25');

    tmux.keys(S, 'k', 'Enter');
    tmux.burst(S, '117.75');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Counted: $117.75, balanced');
  });

  it('says what is wrong with bad input, in words, and keeps running', async () => {
    tmux.keys(S, 'k', 'Enter');
    await tmux.waitFor(S, 'Counted cash  _');
    tmux.burst(S, '12.345');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Counted cash: "12.345" has more than 2 decimals for USD');
    tmux.keys(S, 'C-u');
    await tmux.waitWithout(S, 'Counted cash  ');
    tmux.keys(S, 'k', 'Enter');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Type the cash counted in the drawer (0 if it is empty).');
    tmux.keys(S, 'q');
    await tmux.waitFor(S, '"q" is not part of an amount');
    tmux.burst(S, '1,000');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, /Counted cash: "1,000" has a comma that could separate thousands/);
    tmux.keys(S, 'Escape');
    await tmux.waitWithout(S, 'Counted cash  ');
    // The last good count stands; the counter is still there.
    const screen = await tmux.waitFor(S, 'Counted: $117.75, balanced');
    expect(screen).toContain('g refresh · k count the drawer');
    expect(tmux.status(S).dead).toBe(false);
  });
});
