import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POS_BIN, runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveTmux } from './helpers/tools.js';

/**
 * A cart built at the counter, for real: `pos up` in an 80×24 tmux terminal, two lines typed with
 * `+`, charged as their total, tapped on the simulated reader; the payment keeps the cart the
 * reader showed (the API stores what create-payment sent as line_items, after checking the sum).
 */
const hasTmux = haveTmux();
const dir = tempDir('pos-tui-cart-');
const configDir = join(dir.path, 'config');
const tmux = new Tmux();
const S = 'cart-1';
/** The CLI as staff at another shell would run it, on the profile `pos up` saved. */
const cli = (args: string[]) => runCli(args, { env: { POS_CONFIG_DIR: configDir } });

interface Listed {
  id: string;
  reference: string;
  status: string;
  amount: number;
  cart: { line_items: { description: string; quantity: number; amount: number }[]; tax: number | null } | null;
}

describe.skipIf(!hasTmux)('a cart at the counter (tmux, pos up)', () => {
  beforeAll(async () => {
    tmux.start(S, [`POS_CONFIG_DIR=${configDir}`, process.execPath, POS_BIN, 'up', '--port', '0', '--data-dir', join(dir.path, 'data')]);
    await tmux.waitFor(S, 'Press any key to open the counter', 25_000);
    tmux.keys(S, 'Space');
    await tmux.waitFor(S, '● online');
  });
  afterAll(() => {
    tmux.kill();
    dir.cleanup();
  });

  it('builds a two-line cart with +, takes one off with -, charges the total and keeps the lines on the payment', async () => {
    tmux.burst(S, '+');
    await tmux.waitFor(S, 'New line  Description: _');
    tmux.burst(S, 'Flat white\r');
    await tmux.waitFor(S, 'Unit price: _');
    tmux.burst(S, '4,50\r');
    await tmux.waitFor(S, 'Quantity: _');
    tmux.burst(S, '2\r');
    await tmux.waitFor(S, 'Total   $9.00');

    // A slip: a third line taken off again with -.
    tmux.burst(S, '+');
    await tmux.waitFor(S, 'Description: _');
    tmux.burst(S, 'Quiche\r3\r\r');
    await tmux.waitFor(S, 'Total   $12.00');
    tmux.burst(S, '-');
    await tmux.waitFor(S, 'Total   $9.00');

    tmux.burst(S, '+');
    await tmux.waitFor(S, 'Description: _');
    tmux.burst(S, 'Almond croissant\r');
    await tmux.waitFor(S, 'Unit price: _');
    // A price the currency cannot have is refused in words; the line stays open for another try.
    tmux.burst(S, '3.805\r');
    await tmux.waitFor(S, 'has more than 2 decimals for USD');
    tmux.keys(S, 'BSpace');
    tmux.burst(S, '\r\r');
    const cart = await tmux.waitFor(S, 'Total   $12.80');
    expect(cart).toContain('Cart  2 lines');
    expect(cart).toMatch(/2 × Flat white\s+@\s+\$4\.50\s+\$9\.00/);
    expect(cart).toMatch(/1 × Almond croissant\s+@\s+\$3\.80\s+\$3\.80/);

    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $12.80');
    tmux.keys(S, 's');
    const approved = await tmux.waitFor(S, '✔ APPROVED  $12.80', 20_000);
    const reference = /txn_\w+/.exec(approved)?.[0];
    expect(reference).toBeTruthy();

    const listed = (JSON.parse((await cli(['transactions', 'list', '--json'])).stdout) as { data: Listed[] }).data;
    const paid = listed.find((t) => t.reference === reference);
    expect(paid).toMatchObject({ status: 'succeeded', amount: 1280 });
    expect(paid?.cart).toEqual({
      line_items: [
        { description: 'Flat white', quantity: 2, amount: 450 },
        { description: 'Almond croissant', quantity: 1, amount: 380 },
      ],
      tax: null,
    });

    // The next sale starts with an empty cart.
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Press Enter to charge.');
    expect(tmux.screen(S)).not.toContain('Cart ');
  });
});
