import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POS_BIN, runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveTmux } from './helpers/tools.js';

/**
 * A sale paid in parts at the till, for real: `pos up` in an 80×24 tmux terminal, its simulator
 * deciding the card part. Cash then card, approved; then a card part the issuer declines, leaving
 * the sale open with its cash part kept and the counter saying what is still due.
 */
const hasTmux = haveTmux();
const dir = tempDir('pos-split-');
const configDir = join(dir.path, 'config');
const tmux = new Tmux();
const S = 'split';

type Listed = { data: { reference: string; status: string; amount: number; payment_method_type: string; metadata: Record<string, string> }[] };
const partsOf = async (order: string) =>
  (JSON.parse((await runCli(['transactions', 'list', '--json'], { env: { POS_CONFIG_DIR: configDir } })).stdout) as Listed).data.filter((t) => t.metadata.order === order);

describe.skipIf(!hasTmux)('split tender at the till (tmux, pos up)', () => {
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

  it('takes $20.00 in cash and the $30.00 rest on a card, under one order', async () => {
    tmux.burst(S, '50$');
    await tmux.waitFor(S, 'CASH SALE  $50.00 due');
    tmux.burst(S, '20/');
    await tmux.waitFor(S, 'STILL DUE $30.00: Enter, then a card or more cash.');
    tmux.keys(S, 'Enter');
    const order = /Sale (ord_\w+) {2}\$50\.00 {2}paid \$20\.00 cash/.exec(await tmux.waitFor(S, 'Enter alone: $30.00 on card'))?.[1];
    expect(order).toBeDefined();
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $30.00');
    tmux.keys(S, 's');
    expect(await tmux.waitFor(S, 'PAID IN FULL')).toContain('paid $20.00 cash + $30.00 card');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, `Sale ${order} paid in full: 20.00 cash + 30.00 card.`);
    expect((await partsOf(order!)).map((t) => [t.payment_method_type, t.amount, t.status]).sort()).toEqual([
      ['cash', 2000, 'succeeded'],
      ['terminal', 3000, 'succeeded'],
    ]);
    // History shows it as one sale over its parts; the Day view counts one sale, each part in its tender.
    tmux.keys(S, 'h');
    await tmux.waitFor(S, new RegExp(`\\$50\\.00\\s+paid: cash \\+ \\w+\\s+2 parts\\s+${order}`));
    tmux.keys(S, 'd');
    const day = await tmux.waitFor(S, 'Cash: 1 paid ($20.00)');
    expect(day).toMatch(/All\s+1\s+\$50\.00/);
    expect(day).toContain('Card: 1 paid ($30.00)');
    tmux.keys(S, 'c');
    await tmux.waitFor(S, 'Press Enter to charge.');
  });

  it('keeps the cash part and the sale open when the card part is declined, and says what is still due', async () => {
    // $10.05 on the card: an amount the simulator's issuer declines.
    tmux.burst(S, '30.05$');
    await tmux.waitFor(S, 'CASH SALE  $30.05 due');
    tmux.burst(S, '20/');
    await tmux.waitFor(S, 'STILL DUE $10.05: Enter');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'Enter alone: $10.05 on card');
    tmux.keys(S, 'Enter');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $10.05');
    tmux.keys(S, 's');
    const declined = await tmux.waitFor(S, '✘ DECLINED  $10.05');
    expect(declined).toContain('The sale stays open with its paid parts kept');
    expect(declined).toContain('STILL DUE $10.05');
    tmux.keys(S, 'Enter');
    const open = await tmux.waitFor(S, 'Enter alone: $10.05 on card');
    const order = /Sale (ord_\w+) {2}\$30\.05 {2}paid \$20\.00 cash/.exec(open)?.[1];
    expect(order).toBeDefined();
    expect((await partsOf(order!)).map((t) => [t.payment_method_type, t.amount, t.status]).sort()).toEqual([
      ['cash', 2000, 'succeeded'],
      ['terminal', 1005, 'failed'],
    ]);
  });
});
