import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceState } from '../shared/agent-protocol.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { nodeSerialBinding, type SerialConnection } from '../agent/ports.js';
import { CounterClient, spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client } from './helpers/api.js';
import { DisplayScreen } from './helpers/escpos.js';
import { PrinterEmulator, Pty } from './helpers/pty.js';
import { POS_BIN, runCli, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveSocat, haveTmux } from './helpers/tools.js';
import { Tmux } from './helpers/tmux.js';

// @backend-once the bytes the agent sends printers, drawers and displays on ptys; the sales it records are cash-sales', on both backends.

/**
 * The agent's receipt printer, cash drawer and customer display on socat pty pairs (and a network
 * printer on a local TCP socket), with a real server and a real agent process. The test plays the
 * devices: it decodes every byte the agent sends (test/helpers/escpos.ts, independent of the
 * agent's encoder) and answers the printer's status requests as scripted.
 */
const socatAvailable = haveSocat();

const dir = tempDir('pos-hw-');
const printerAgentEnd = join(dir.path, 'printer');
const printerDeviceEnd = join(dir.path, 'printer-device');
const displayAgentEnd = join(dir.path, 'display');
const displayDeviceEnd = join(dir.path, 'display-device');
const agentDir = join(dir.path, 'agent');

/**
 * Plug and unplug are noticed within 2 s by design (paths looked at every 500 ms, a status answer
 * expected within 1 s); tests wait longer so a loaded machine's scheduling is not taken for a failure.
 */
const DEVICE_DEADLINE_MS = 8_000;

let t: TestServer;
let m: CreatedMerchant;
let agent: AgentProcess;
let counter: CounterClient;
let reader: string;

const printerPty = new Pty(printerAgentEnd, printerDeviceEnd);
const displayPty = new Pty(displayAgentEnd, displayDeviceEnd);

const printer = new PrinterEmulator();
const screen = new DisplayScreen();
let printerConn: SerialConnection | undefined;
let displayConn: SerialConnection | undefined;

async function attachPrinter(): Promise<void> {
  const conn = await nodeSerialBinding.open(printerDeviceEnd, 9600);
  conn.onData(printer.attach((bytes) => conn.write(bytes)));
  printerConn = conn;
}

async function attachDisplay(): Promise<void> {
  const conn = await nodeSerialBinding.open(displayDeviceEnd, 9600);
  conn.onData((chunk) => screen.feed(chunk));
  displayConn = conn;
}

async function startAgent(extra: string[] = []): Promise<void> {
  agent = await spawnAgent([
    '--server', t.url, '--api-key', m.keys.sk_test, '--data-dir', agentDir, '--simulate', '1', '--heartbeat-ms', '500', '--log-level', 'info',
    '--printer', printerAgentEnd, '--printer-columns', '42', '--display', displayAgentEnd, '--display-idle', 'Welcome to Kiosk', ...extra,
  ]);
  counter = await CounterClient.connect(agent.url);
  counter.send({ type: 'hello', protocol: 1 });
  await counter.next('welcome');
  counter.send({ type: 'subscribe', topics: ['readers', 'transactions', 'devices'] });
  const readers = await counter.next('readers', (msg) => msg.readers.length === 1);
  reader = readers.readers[0]!.processor_terminal_id;
  await eventually(() => (counter.latest(reader)?.status === 'online' ? true : undefined), 10_000);
}

async function stopAgent(): Promise<void> {
  counter?.close();
  await agent?.stop();
}

/** The device as the latest `devices` or `device` message shows it. */
function device(id: DeviceState['id']): DeviceState | undefined {
  for (let i = counter.messages.length - 1; i >= 0; i -= 1) {
    const msg = counter.messages[i]!;
    if (msg.type === 'device' && msg.device.id === id) return msg.device;
    if (msg.type === 'devices') {
      const found = msg.devices.find((d) => d.id === id);
      if (found) return found;
    }
  }
  return undefined;
}

const waitDevice = (id: DeviceState['id'], where: (d: DeviceState) => boolean, timeoutMs = DEVICE_DEADLINE_MS) =>
  eventually(() => {
    const d = device(id);
    return d && where(d) ? d : undefined;
  }, timeoutMs);

/** Waits, then makes sure nothing more arrives: "printed once" needs a quiet spell after the first. */
const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  if (!socatAvailable) return;
  t = await startTestServer();
  m = await t.merchant('Kiosk Café');
  await printerPty.plug();
  await displayPty.plug();
  await attachPrinter();
  await attachDisplay();
  await startAgent();
});

afterAll(async () => {
  await stopAgent();
  await printerConn?.close();
  await displayConn?.close();
  await printerPty.unplug();
  await displayPty.unplug();
  await t?.stop();
  dir.cleanup();
});

describe.skipIf(!socatAvailable)('counter hardware on pty pairs', () => {
  it('reports the printer and the display online with the printer status, and shows the idle message', async () => {
    const p = await waitDevice('printer', (d) => d.status === 'online');
    expect(p).toMatchObject({ kind: 'receipt_printer', target: printerAgentEnd, paper: 'ok', cover_open: false, drawer_open: false, last_error: null, queued: 0 });
    expect(p.last_seen_at).not.toBeNull();
    expect(await waitDevice('display', (d) => d.status === 'online')).toMatchObject({ kind: 'customer_display', target: displayAgentEnd });
    await eventually(() => (screen.text()[0] === 'Welcome to Kiosk' ? true : undefined), DEVICE_DEADLINE_MS);
    // The agent asks the printer's real-time status: DLE EOT 1, 2 and 4.
    const asked = new Set(printer.decoder.events.flatMap((e) => (e.type === 'status_request' ? [e.n] : [])));
    expect([...asked].sort()).toEqual([1, 2, 4]);
  });

  it('on an approved card payment shows the amount, then the approval, and prints the customer receipt with its QR code and a cut', async () => {
    const from = printer.mark;
    const shownFrom = screen.history.length;
    const started = await counter.command({ type: 'start_payment', request_id: 'hw-sale-1', reader, amount: 4750, description: 'Two flat whites' });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    await eventually(() => (screen.history.slice(shownFrom).some(([a, b]) => a === 'Amount due' && b === '$47.50') ? true : undefined), DEVICE_DEADLINE_MS);
    const tap = await counter.command({ type: 'simulate_tap', request_id: 'hw-tap-1', reader });
    expect(tap.ok, JSON.stringify(tap.error)).toBe(true);
    await eventually(() => (screen.history.slice(shownFrom).some(([a]) => a === 'Approved - thank you') ? true : undefined), DEVICE_DEADLINE_MS);
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    const txnId = (started.data as { transaction: { id: string } }).transaction.id;
    const txn = (await client(t.url, m.keys.sk_test).get<{ data: { reference: string; receipt_url: string; card_last_four: string } }>(`/v1/transactions/${txnId}`)).body.data;
    const text = receipt!.lines.join('\n');
    expect(receipt!.lines[0]).toContain('Kiosk Café'.replace('é', '\x82'));
    expect(text).toMatch(/TEST MODE: no money moved/);
    expect(text).toMatch(/Date +\d{4}-\d\d-\d\d\nTime +\d\d:\d\d:\d\d UTC/);
    expect(text).toMatch(new RegExp(`Reference +${txn.reference}`));
    expect(text).toMatch(/Description +Two flat whites/);
    expect(text).toMatch(/Total +\$47\.50/);
    expect(text).toMatch(/Tip +\$0\.00/);
    expect(text).toMatch(new RegExp(`Card +Visa \\*\\*\\*\\* ${txn.card_last_four}`));
    expect(text).toMatch(/APPROVED/);
    expect(receipt!.lines.every((l) => l.length <= 42)).toBe(true);
    expect(receipt!.qr).toBe(txn.receipt_url);
    expect(printer.decoder.count('qr_print', from)).toBe(1);
    expect(printer.decoder.count('kick', from)).toBe(0);
    expect(printer.decoder.count('unknown', from)).toBe(0);
    // An approval seen again (the next status poll, a reconnect) prints nothing more.
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(1);
  });

  it('shows a decline in the customer\'s words', async () => {
    const shownFrom = screen.history.length;
    const started = await counter.command({ type: 'start_payment', request_id: 'hw-sale-2', reader, amount: 1200 });
    expect(started.ok).toBe(true);
    const from = printer.mark;
    await counter.command({ type: 'simulate_tap', request_id: 'hw-tap-2', reader, card_number: '4000000000000002' });
    await eventually(() => (screen.history.slice(shownFrom).some(([a, b]) => a === 'Card declined' && b === 'Try another card') ? true : undefined), DEVICE_DEADLINE_MS);
    expect(printer.receipts(from)).toHaveLength(0);
    await counter.command({ type: 'cancel_payment', request_id: 'hw-cancel-2', transaction_id: (started.data as { transaction: { id: string } }).transaction.id });
  });

  it('takes a cash sale: the drawer kick, the receipt with cash and change, the change on the display, and the close-out with its over/short', async () => {
    const from = printer.mark;
    const sale = await counter.command({ type: 'cash_sale', request_id: 'hw-cash-1', amount: 1275, amount_tendered: 2000, description: 'Cake', staff: 'sam' });
    expect(sale.ok, JSON.stringify(sale.error)).toBe(true);
    const data = sale.data as { transaction: { id: string; status: string; change_due: number; receipt_url: string }; drawer_opened: boolean; receipt: string };
    expect(data).toMatchObject({ drawer_opened: true, receipt: 'queued', transaction: { status: 'succeeded', change_due: 725 } });
    await eventually(() => (printer.decoder.count('kick', from) === 1 ? true : undefined), DEVICE_DEADLINE_MS);
    expect(printer.decoder.events.slice(from).find((e) => e.type === 'kick')).toEqual({ type: 'kick', pin: 2, onMs: 100, offMs: 500 });
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    const text = receipt!.lines.join('\n');
    expect(text).toMatch(/Total +\$12\.75/);
    expect(text).toMatch(/Cash +\$20\.00/);
    expect(text).toMatch(/Change +\$7\.25/);
    expect(text).not.toMatch(/Card /);
    expect(receipt!.qr).toBe(data.transaction.receipt_url);
    // The display and the printer are two serial lines read apart: the display's bytes, written
    // first, may still be on their way when the receipt has been read.
    await eventually(() => (screen.text()[0] === 'Cash          $20.00' ? true : undefined), DEVICE_DEADLINE_MS);
    expect(screen.text()).toEqual(['Cash          $20.00', 'Change         $7.25']);
    // The same request again is the same sale: one payment, no second kick or receipt.
    const again = await counter.command({ type: 'cash_sale', request_id: 'hw-cash-1', amount: 1275, amount_tendered: 2000, description: 'Cake', staff: 'sam' });
    expect((again.data as { transaction: { id: string } }).transaction.id).toBe(data.transaction.id);

    const report = await runCli(['report', 'day', '--float', '100', '--counted-cash', '112.50', '--server', t.url, '--api-key', m.keys.sk_test]);
    expect(report.status, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/Cash: 1 paid \(\$12\.75\)/);
    expect(report.stdout).toMatch(/Card: 1 paid \(\$47\.50\)/);
    expect(report.stdout).toMatch(/Expected in drawer: \$112\.75 \(float \$100\.00\)/);
    expect(report.stdout).toMatch(/Counted: \$112\.50, short by \$0\.25/);
    const json = await runCli(['report', 'day', '--counted-cash', '12.75', '--json', '--server', t.url, '--api-key', m.keys.sk_test]);
    expect((JSON.parse(json.stdout) as { data: { tender: unknown } }).data.tender).toMatchObject({ expected_cash: 1275, counted_cash: 1275, over_short: 0 });
  });

  it('opens the drawer on "no sale" and logs who did it', async () => {
    const from = printer.mark;
    const opened = await counter.command({ type: 'open_drawer', request_id: 'hw-nosale-1', reason: 'no_sale', staff: 'alex' });
    expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
    await eventually(() => (printer.decoder.count('kick', from) === 1 ? true : undefined), DEVICE_DEADLINE_MS);
    const logged = await agent.logged('cash drawer opened');
    expect(logged).toMatchObject({ reason: 'cash_sale', staff: 'sam' });
    await eventually(() => (agent.logs.some((l) => l.includes('"reason":"no_sale"') && l.includes('"staff":"alex"')) ? true : undefined));
    printer.status = { ...printer.status, drawerOpen: true };
    await waitDevice('printer', (d) => d.drawer_open === true);
    printer.status = { ...printer.status, drawerOpen: false };
    await waitDevice('printer', (d) => d.drawer_open === false);
  });

  it('queues a receipt while the paper is out, says so in words, and prints it once after an agent restart when paper is back', async () => {
    printer.status = { ...printer.status, paperOut: true };
    await waitDevice('printer', (d) => d.paper === 'out');
    expect(device('printer')).toMatchObject({ status: 'online', last_error: 'Printer out of paper' });
    const from = printer.mark;
    const sale = await counter.command({ type: 'cash_sale', request_id: 'hw-cash-2', amount: 900, amount_tendered: 1000 });
    expect(sale.ok).toBe(true);
    await waitDevice('printer', (d) => d.queued === 1);
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(0);

    await stopAgent();
    printer.status = { ...printer.status, paperOut: false };
    await startAgent();
    const receipts = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    expect(receipts[0]!.lines.join('\n')).toMatch(/Total +\$9\.00/);
    await waitDevice('printer', (d) => d.queued === 0);
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(1);
  });

  it('takes a silent printer offline, keeps a reprint queued, and prints it once when the printer answers again', async () => {
    printer.status = { ...printer.status, answering: false };
    await waitDevice('printer', (d) => d.status === 'offline');
    expect(device('printer')?.last_error).toMatch(/not answering/i);
    const sales = await client(t.url, m.keys.sk_test).get<{ data: { id: string; payment_method_type: string }[] }>('/v1/transactions');
    const cash = sales.body.data.find((s) => s.payment_method_type === 'cash')!;
    const from = printer.mark;
    const reprint = await counter.command({ type: 'print_receipt', request_id: 'hw-reprint-1', transaction_id: cash.id, copy: 'merchant' });
    expect(reprint.ok, JSON.stringify(reprint.error)).toBe(true);
    const kick = await counter.command({ type: 'open_drawer', request_id: 'hw-nosale-2' });
    expect(kick).toMatchObject({ ok: false, error: { code: 'drawer_unavailable' } });
    await quiet(1_000);
    expect(printer.receipts(from)).toHaveLength(0);

    printer.status = { ...printer.status, answering: true };
    const receipts = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    expect(receipts[0]!.lines.map((l) => l.trim())).toContain('MERCHANT COPY');
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(1);
  });

  it('prints a receipt whose cable was pulled halfway through again, whole and once, when the printer is plugged back', async () => {
    // The test's end of the cable passes on the first half of the receipt's first chunk, then the cable is pulled.
    await printerConn?.close();
    const conn = await nodeSerialBinding.open(printerDeviceEnd, 9600);
    const feed = printer.attach((bytes) => conn.write(bytes));
    let pulled: Promise<void> | undefined;
    conn.onData((chunk) => {
      if (pulled) return;
      // The receipt's first printable text; status requests and the drawer kick have none.
      const start = /[ -~]{4}/.exec(Buffer.from(chunk).toString('latin1'))?.index ?? -1;
      if (start < 0) return feed(chunk);
      feed(chunk.subarray(0, start + Math.max(4, Math.floor((chunk.length - start) / 2))));
      pulled = conn.close().then(() => printerPty.unplug());
    });
    printerConn = conn;
    const from = printer.mark;
    const sale = await counter.command({ type: 'cash_sale', request_id: 'hw-cash-pulled', amount: 1250, amount_tendered: 2000 });
    expect(sale.ok, JSON.stringify(sale.error)).toBe(true);
    await eventually(() => (pulled ? true : undefined), DEVICE_DEADLINE_MS);
    await pulled;
    await waitDevice('printer', (d) => d.status === 'offline');
    expect(device('printer')?.queued).toBe(1);
    expect(printer.decoder.count('cut', from)).toBe(0);

    await printerPty.plug();
    await attachPrinter();
    await eventually(() => (printer.decoder.count('cut', from) > 0 ? true : undefined), DEVICE_DEADLINE_MS);
    await waitDevice('printer', (d) => d.status === 'online' && d.queued === 0);
    await quiet(1_500);
    expect(printer.decoder.count('cut', from)).toBe(1);
    const [receipt] = printer.receipts(from);
    const text = receipt!.lines.join('\n');
    expect(text).toMatch(/Total +\$12\.50/);
    expect(text).toMatch(/Change +\$7\.50/);
  });

  it('notices the printer and the display unplugged and plugged back', async () => {
    await printerConn?.close();
    await displayConn?.close();
    await printerPty.unplug();
    await displayPty.unplug();
    await waitDevice('printer', (d) => d.status === 'offline');
    await waitDevice('display', (d) => d.status === 'offline');
    await printerPty.plug();
    await displayPty.plug();
    await attachPrinter();
    await attachDisplay();
    await waitDevice('printer', (d) => d.status === 'online');
    await waitDevice('display', (d) => d.status === 'online');
    // The display shows again what it showed, on the new connection.
    await eventually(() => (screen.text()[0] !== '' ? true : undefined), DEVICE_DEADLINE_MS);
  });
});

describe.skipIf(!socatAvailable || !haveTmux())('a cash sale at the counter TUI (tmux, 80×24)', () => {
  const term = new Tmux();
  const SESSION = 'pos-cash';
  const keys = (...k: string[]) => term.keys(SESSION, ...k);
  const waitFor = (text: string | RegExp, timeoutMs?: number) => term.waitFor(SESSION, text, timeoutMs);

  beforeAll(() => term.start(SESSION, [`POS_CONFIG_DIR=${THROWAWAY_CONFIG_DIR}`, process.execPath, POS_BIN, 'tui', '--agent', agent.url, '--server', t.url, '--api-key', m.keys.sk_test]));
  afterAll(() => term.kill());

  it('types the amount, takes the cash, shows the change, opens the drawer, prints, and opens it again for no sale', async () => {
    await waitFor('Press Enter to charge.', 25_000);
    await waitFor('● online');
    const from = printer.mark;
    keys('8.50');
    await waitFor('Amount  8.50_');
    keys('$');
    await waitFor('CASH SALE  $8.50 due');
    keys('10', 'Enter');
    const done = await waitFor('CHANGE DUE        $1.50');
    expect(done).toContain('Drawer opened.');
    expect(done).toContain('Receipt printing.');
    await eventually(() => (printer.decoder.count('kick', from) === 1 ? true : undefined), DEVICE_DEADLINE_MS);
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    const text = receipt!.lines.join('\n');
    expect(text).toMatch(/Total +\$8\.50/);
    expect(text).toMatch(/Cash +\$10\.00/);
    expect(text).toMatch(/Change +\$1\.50/);
    await eventually(() => (screen.text()[0] === 'Cash          $10.00' ? true : undefined), DEVICE_DEADLINE_MS);
    expect(screen.text()).toEqual(['Cash          $10.00', 'Change         $1.50']);

    keys('Enter');
    await waitFor('Press Enter to charge.');
    keys('o');
    await waitFor('Drawer opened (no sale).');
    await eventually(() => (printer.decoder.count('kick', from) === 2 ? true : undefined), DEVICE_DEADLINE_MS);

    keys('r');
    await waitFor(/Receipt printer\s+● online/);
    await waitFor(/Customer display\s+● online/);
    keys('d');
    await waitFor(/Cash: \d+ paid/);
    await waitFor(/Expected in drawer: \$/);
  });
});

describe.skipIf(!socatAvailable)('a network printer on port 9100 (a local TCP socket)', () => {
  let server: Server;
  const net = new PrinterEmulator();
  let tcpAgent: AgentProcess;
  const tcpDir = tempDir('pos-hw-tcp-');

  beforeAll(async () => {
    server = createServer((socket: Socket) => {
      socket.on('data', net.attach((bytes) => socket.write(bytes)));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    tcpAgent = await spawnAgent(['--server', t.url, '--api-key', m.keys.sk_test, '--data-dir', tcpDir.path, '--no-processor-readers', '--printer', `tcp:127.0.0.1:${port}`, '--printer-columns', '32']);
  });

  afterAll(async () => {
    await tcpAgent?.stop();
    await new Promise((r) => server.close(r));
    tcpDir.cleanup();
  });

  it('prints a 32-column receipt on request and kicks the drawer', async () => {
    const c = await CounterClient.connect(tcpAgent.url);
    c.send({ type: 'hello', protocol: 1 });
    await c.next('welcome');
    c.send({ type: 'subscribe', topics: ['devices'] });
    await eventually(() => {
      const last = c.messages.filter((msg) => msg.type === 'device' || msg.type === 'devices').at(-1);
      const state = last?.type === 'device' ? last.device : last?.type === 'devices' ? last.devices[0] : undefined;
      return state?.status === 'online' ? true : undefined;
    }, DEVICE_DEADLINE_MS);
    const sale = await client(t.url, m.keys.sk_test).post<{ data: { id: string; receipt_url: string } }>('/v1/transactions', { amount: 450, payment_method_type: 'cash', amount_tendered: 500 });
    const printed = await c.command({ type: 'print_receipt', request_id: 'tcp-1', transaction_id: sale.body.data.id });
    expect(printed.ok, JSON.stringify(printed.error)).toBe(true);
    const [receipt] = await eventually(() => (net.receipts().length ? net.receipts() : undefined), DEVICE_DEADLINE_MS);
    expect(receipt!.lines.every((l) => l.length <= 32)).toBe(true);
    expect(receipt!.lines.join('\n')).toMatch(/Change +\$0\.50/);
    expect(receipt!.qr).toBe(sale.body.data.receipt_url);
    const kicked = await c.command({ type: 'open_drawer', request_id: 'tcp-2', reason: 'no_sale' });
    expect(kicked.ok).toBe(true);
    await eventually(() => (net.decoder.count('kick') === 1 ? true : undefined), DEVICE_DEADLINE_MS);
    c.close();
  });
});
