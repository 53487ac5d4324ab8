import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeSerialBinding, type SerialConnection } from '../agent/ports.js';
import type { Transaction } from '../shared/api/types.js';
import { DisplayScreen } from './helpers/escpos.js';
import { POS_BIN, runCli } from './helpers/cli.js';
import { PrinterEmulator, Pty } from './helpers/pty.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveSocat, haveTmux } from './helpers/tools.js';

/**
 * The counter's way out of every "no", for real: `pos up --printer --display` in an 80×24 tmux
 * terminal with a socat pty printer and display the test plays, one stack for every case. A
 * customer's cancel sent again, an Enter on an empty field, a burst of keys, a printer pulled, and a
 * reader the processor says is offline.
 */
const ready = haveTmux() && haveSocat();
const dir = tempDir('pos-recovery-');
const configDir = join(dir.path, 'config');
const printerPty = new Pty(join(dir.path, 'printer'), join(dir.path, 'printer-device'));
const displayPty = new Pty(join(dir.path, 'display'), join(dir.path, 'display-device'));
const printer = new PrinterEmulator();
const display = new DisplayScreen();
const tmux = new Tmux();
const S = 'recovery';

let printerConn: SerialConnection | undefined;
let displayConn: SerialConnection | undefined;

/** The device's end of the printer cable: every byte the agent sends is decoded, status requests answered. */
async function attachPrinter(): Promise<void> {
  const conn = await nodeSerialBinding.open(printerPty.deviceEnd, 9600);
  conn.onData(printer.attach((bytes) => conn.write(bytes)));
  printerConn = conn;
}

/** Plug and unplug are noticed within 2 s by design; a loaded machine gets more. */
const DEVICE_DEADLINE_MS = 10_000;

/** The CLI as staff at another shell would run it, on the profile `pos up` saved. */
const cli = (args: string[]) => runCli(args, { env: { POS_CONFIG_DIR: configDir } });

/** The owner's view of the shop's payments, newest first, on the secret key `pos up` saved. */
async function payments(): Promise<Transaction[]> {
  const listed = await cli(['transactions', 'list', '--size', '100', '--json']);
  expect(listed.status, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { data: Transaction[] }).data;
}

/** The simulator's control API, where the reader's link to the processor is cut. */
async function simulator(path: string, body: unknown): Promise<void> {
  const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')) as { current_profile: string; profiles: Record<string, { server: string; api_key: string }> };
  const profile = config.profiles[config.current_profile]!;
  const merchant = (await (await fetch(`${profile.server}/v1/merchant`, { headers: { authorization: `Bearer ${profile.api_key}` } })).json()) as { data: { processor: { api_base: string } } };
  const res = await fetch(`${merchant.data.processor.api_base.replace(/\/+$/, '')}/_sim${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Back to an empty charge screen after a sale ends. */
async function nextSale(): Promise<void> {
  tmux.keys(S, 'Enter');
  await tmux.waitFor(S, 'Press Enter to charge.');
}

const receiptsOf = (reference: string, from: number) => printer.receipts(from).filter((r) => r.lines.some((l) => l.includes(reference)));

describe.skipIf(!ready)('the counter after a no, on pos up with a printer and a display (tmux, 80×24)', () => {
  let tillId: string;

  beforeAll(async () => {
    await printerPty.plug();
    await displayPty.plug();
    await attachPrinter();
    displayConn = await nodeSerialBinding.open(displayPty.deviceEnd, 9600);
    displayConn.onData((chunk) => display.feed(chunk));
    // The reader goes offline below a moment after its last sale, with no word from the processor
    // (Stripe sends none): a max age of 0 reads it before every payment, as a till idle for longer would.
    tmux.start(S, [`POS_CONFIG_DIR=${configDir}`, 'POS_READER_STATUS_MAX_AGE_MS=0', process.execPath, POS_BIN, 'up', '--port', '0', '--data-dir', join(dir.path, 'data'), '--printer', printerPty.agentEnd, '--display', displayPty.agentEnd]);
    await tmux.waitFor(S, 'Press any key to open the counter', 40_000);
    tmux.keys(S, 'Space');
    await tmux.waitFor(S, 'Press Enter to charge.');
    await tmux.waitFor(S, '● online', 20_000);
    const readers = JSON.parse((await cli(['readers', 'list', '--json'])).stdout) as { data: { name: string; processor_terminal_id: string }[] };
    tillId = readers.data.find((r) => r.name === 'Till 1')!.processor_terminal_id;
  }, 90_000);

  afterAll(async () => {
    tmux.kill();
    await printerConn?.close();
    await displayConn?.close();
    await printerPty.unplug();
    await displayPty.unplug();
    dir.cleanup();
  });

  it('drives the printer and the display it was given', async () => {
    // The agent asks the printer's status on its pty, and the display shows the shop's idle line.
    await eventually(() => (printer.decoder.count('status_request') >= 3 ? true : undefined), DEVICE_DEADLINE_MS);
    await eventually(() => (display.text()[0]?.trim() === 'Demo Shop' ? true : undefined), DEVICE_DEADLINE_MS);
  });

  it('does not start a payment on Enter with an empty amount', async () => {
    const before = (await payments()).length;
    tmux.keys(S, 'Enter');
    const asked = await tmux.waitFor(S, /Charge \$[\d.]+ again\? y\/n/);
    expect(asked).not.toContain('WAITING FOR CARD');
    // The accident itself: Enter again. Only y charges.
    tmux.keys(S, 'Enter');
    const back = await tmux.waitFor(S, /^(?![\s\S]*again\? y\/n)[\s\S]*Press Enter to charge\./);
    expect(back).toContain('Amount  _');
    expect(await payments()).toHaveLength(before);
  });

  it('approves "12.50 Enter s" typed in one burst once, and prints its receipt on the pty', async () => {
    const from = printer.mark;
    tmux.burst(S, '12.50\rs');
    const approved = await tmux.waitFor(S, '✔ APPROVED  $12.50', 30_000);
    const reference = /txn_\w+/.exec(approved)![0];
    const all = await payments();
    expect(all.filter((t) => t.amount === 1250).map((t) => [t.reference, t.status])).toEqual([[reference, 'succeeded']]);
    // Nor did the Enter before it charge the amount it offered to repeat.
    expect(all.filter((t) => t.amount === 1000)).toEqual([]);
    await eventually(() => (receiptsOf(reference, from).length ? true : undefined), DEVICE_DEADLINE_MS);
    // The display followed the sale to its approval.
    expect(display.history.some(([a]) => a?.startsWith('Approved'))).toBe(true);
    await nextSale();
  });

  it('sends a payment the customer canceled on the reader again with a, and it is approved with no extra payment', async () => {
    tmux.burst(S, '21\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $21.00');
    const pressed = await cli(['simulate', 'cancel', 'Till 1']);
    expect(pressed.status, pressed.stderr).toBe(0);
    const canceled = await tmux.waitFor(S, 'CUSTOMER CANCELED ON THE READER: $21.00');
    expect(canceled).toContain('a send to the reader again');
    tmux.keys(S, 'a');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $21.00');
    tmux.keys(S, 's');
    const approved = await tmux.waitFor(S, '✔ APPROVED  $21.00', 30_000);
    const reference = /txn_\w+/.exec(approved)![0];
    const mine = (await payments()).filter((t) => t.amount === 2100);
    expect(mine.map((t) => [t.reference, t.status])).toEqual([[reference, 'succeeded']]);
    await nextSale();
  });

  it('says in words that a pulled printer did not print the receipt, and R prints it again once it is back', async () => {
    await printerConn?.close();
    await printerPty.unplug();
    tmux.burst(S, '7.25\r');
    await tmux.waitFor(S, 'WAITING FOR CARD on Till 1: $7.25');
    tmux.keys(S, 's');
    const approved = await tmux.waitFor(S, 'Receipt not printed: Printer offline: check the cable.', 30_000);
    expect(approved).toContain('✔ APPROVED  $7.25');
    expect(approved).toContain('R prints it again');
    expect(approved).not.toMatch(/bad file descriptor|EIO|ENOENT|errno|no_printer/i);
    const reference = /txn_\w+/.exec(approved)![0];

    const from = printer.mark;
    await printerPty.plug();
    await attachPrinter();
    // The receipt kept while the printer was away prints when it is back …
    await eventually(() => (receiptsOf(reference, from).length === 1 ? true : undefined), DEVICE_DEADLINE_MS);
    await tmux.waitWithout(S, 'Receipt not printed', DEVICE_DEADLINE_MS);
    // … and R prints it again, once.
    tmux.keys(S, 'R');
    await eventually(() => (receiptsOf(reference, from).length === 2 ? true : undefined), DEVICE_DEADLINE_MS);
    await nextSale();
  });

  it('offers the payment link when the processor says the reader is offline, and leaves no canceled payment behind', async () => {
    const before = (await payments()).filter((t) => t.status === 'canceled').length;
    await simulator(`/readers/${tillId}/online`, { online: false });
    try {
      tmux.burst(S, '9\r');
      await tmux.waitFor(S, 'Till 1 is offline', 30_000);
      await tmux.waitFor(S, 'Press l to take $9.00 by payment link instead');
      tmux.keys(S, 'l');
      const link = await tmux.waitFor(S, /Payment link for \$9\.00 \(\w+\)/);
      expect(link).toMatch(/http:\/\/127\.0\.0\.1:\d+\/\S+/);
      // The QR code is drawn in block characters above the link.
      expect(link).toMatch(/[█▀▄]{10}/);
      const after = await payments();
      expect(after.filter((t) => t.status === 'canceled')).toHaveLength(before);
      expect(after.filter((t) => t.amount === 900 && t.status !== 'canceled')).toHaveLength(0);
      // The counter shows the processor's view of the reader now, not only the agent's.
      await nextSale();
      await tmux.waitFor(S, /Reader  ‹ Till 1 ›  ○ offline/);
    } finally {
      await simulator(`/readers/${tillId}/online`, { online: true });
    }
  });
});
