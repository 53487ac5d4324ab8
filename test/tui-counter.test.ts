import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POS_BIN, runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveTmux } from './helpers/tools.js';

/**
 * The counter hardened, for real: `pos up` in an 80×24 tmux terminal, its simulator deciding each
 * card's fate. Bursts of keys, amounts as people type them, declines in staff words, and a restart
 * while a payment waits for a card.
 */
const hasTmux = haveTmux();
const dir = tempDir('pos-counter-');
const configDir = join(dir.path, 'config');
const tmux = new Tmux();
const up = (session: string) => tmux.start(session, [`POS_CONFIG_DIR=${configDir}`, process.execPath, POS_BIN, 'up', '--port', '0', '--data-dir', join(dir.path, 'data')]);
/** The CLI as staff at another shell would run it, on the profile `pos up` saved. */
const cli = (args: string[]) => runCli(args, { env: { POS_CONFIG_DIR: configDir } });
const pending = async () => (JSON.parse((await cli(['transactions', 'list', '--status', 'pending', '--json'])).stdout) as { data: { reference: string }[] }).data;

let S = 'counter-1';

/** Back to an empty charge screen after a sale ends. */
async function nextSale(): Promise<void> {
  tmux.keys(S, 'Enter');
  await tmux.waitFor(S, 'Press Enter to charge.');
}

describe.skipIf(!hasTmux)('the counter at the till (tmux, pos up)', () => {
  beforeAll(async () => {
    up(S);
    await tmux.waitFor(S, 'Press any key to open the counter', 25_000);
    tmux.keys(S, 'Space');
    await tmux.waitFor(S, /Press Enter to charge\.[\s\S]*|● online/);
    await tmux.waitFor(S, '● online');
  });
  afterAll(() => {
    tmux.kill();
    dir.cleanup();
  });

  it('charges 12.00 when "12" and Enter arrive in one burst', async () => {
    tmux.burst(S, '12\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $12.00');
    tmux.keys(S, 'x');
    expect(await tmux.waitFor(S, '✘ CANCELED  $12.00')).toContain('Nothing was charged (canceled by staff).');
    await nextSale();
  });

  it('takes "7,50" as 7.50', async () => {
    tmux.burst(S, '7,50\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $7.50');
    tmux.keys(S, 'x');
    await tmux.waitFor(S, '✘ CANCELED  $7.50');
    await nextSale();
  });

  it('refuses 0.49 at once, with the minimum in money', async () => {
    const sent = Date.now();
    tmux.burst(S, '0.49\r');
    const refused = await tmux.waitFor(S, 'Minimum charge is $0.50', 3_000);
    expect(Date.now() - sent).toBeLessThan(3_000);
    expect(refused).not.toContain('WAITING FOR CARD');
    expect(refused).not.toMatch(/minor units|Invalid message/);
    tmux.keys(S, 'C-u');
    await tmux.waitFor(S, 'Amount  _');
  });

  it('does not quit on a q typed into the amount', async () => {
    tmux.burst(S, '12q');
    await tmux.waitFor(S, '"q" is not part of an amount: Esc clears the field.');
    await new Promise((r) => setTimeout(r, 500));
    expect(tmux.status(S).dead).toBe(false);
    expect(tmux.screen(S)).toContain('Amount  12_');
    tmux.keys(S, 'C-u');
    await tmux.waitFor(S, 'Amount  _');
  });

  // Stripe Terminal's test amounts: the cents choose the issuer's answer (simulator/engine/payments/instruments.ts).
  it.each([
    ['10.55', 'Wrong PIN: ask the customer to try again'],
    ['10.75', 'Too many wrong PINs: ask for another card'],
    ['10.01', 'Declined: the customer should call their bank; ask for another card'],
  ])('says why %s was declined, in staff words', async (amount, words) => {
    tmux.burst(S, `${amount}\r`);
    await tmux.waitFor(S, `WAITING FOR CARD on Till 1: $${amount}`);
    tmux.keys(S, 's');
    const declined = await tmux.waitFor(S, `✘ DECLINED  $${amount}`);
    expect(declined).toContain(words);
    await nextSale();
  });

  // Stripe's declining test cards, tapped on the simulated reader from another shell.
  it.each([
    ['4000000000009995', 'Insufficient funds: ask for another card'],
    ['4000000000009979', 'Declined: do not retry this card'],
  ])('says why card %s was declined, on the screen and in pos simulate tap', async (card, words) => {
    tmux.burst(S, '20\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $20.00');
    const tap = await cli(['simulate', 'tap', 'Till 1', '--card', card]);
    expect(tap.stdout).toContain(`Tapped on Till 1: declined: ${words}`);
    expect(await tmux.waitFor(S, '✘ DECLINED  $20.00')).toContain(words);
    await nextSale();
  });

  it('gives pos pay --wait the same words', async () => {
    const child = spawn(process.execPath, [POS_BIN, 'pay', '10.55', '--reader', 'Till 1', '--wait'], { env: { ...process.env, POS_CONFIG_DIR: configDir } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The counter picks the payment up from the reader, as it does any payment it did not start.
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $10.55');
    // The tap is declined (this reader asks for a PIN and it is wrong): pos simulate tap says so with exit 3.
    expect((await cli(['simulate', 'tap', 'Till 1'])).status).toBe(3);
    expect(await exited).toBe(3);
    expect(stderr).toContain('Wrong PIN: ask the customer to try again');
    await tmux.waitFor(S, '✘ DECLINED  $10.55');
    await nextSale();
  }, 60_000);

  it('picks up a payment still on the reader after a restart, refuses a second one without leaving it behind, and cancels it', async () => {
    tmux.burst(S, '15\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $15.00');
    process.kill(tmux.pid(S), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    S = 'counter-2';
    up(S);
    const picked = await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $15.00', 30_000);
    expect(picked).toContain('This payment was already on the reader when the counter started.');
    expect(await pending()).toHaveLength(1);

    // pos pay names the payment in the way and creates none.
    const refused = await cli(['pay', '5', '--reader', 'Till 1']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/Till 1 is busy with payment txn_\w+ \(\$15\.00\)/);
    expect(await pending()).toHaveLength(1);

    tmux.keys(S, 'x');
    expect(await tmux.waitFor(S, '✘ CANCELED  $15.00')).toContain('canceled by staff');
    expect(await pending()).toHaveLength(0);
    await nextSale();
    // The reader is free again: the next sale goes through.
    tmux.burst(S, '3\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $3.00');
    tmux.keys(S, 's');
    await tmux.waitFor(S, '✔ APPROVED  $3.00');
  }, 120_000);
});
