import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeSerialBinding, type SerialConnection } from '../agent/ports.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { PosApi } from '../shared/api/client.js';
import { computeDayReport, localDate } from '../cli/report.js';
import { CounterClient, spawnAgent, type AgentProcess } from './helpers/agent.js';
import { POS_BIN, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { PrinterEmulator, Pty } from './helpers/pty.js';
import { Relay } from './helpers/relay.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveSocat, haveTmux } from './helpers/tools.js';

// @backend-once a terminal, a pty printer and a killed agent process; the sync into the server's store is offline-cash's, on both backends.

/**
 * A till sells cash through an outage, every part real: `pos agent` as its own process with a socat
 * pty printer the test plays, the counter TUI in an 80×24 tmux terminal on it, the agent's way to
 * the server through a relay the test cuts. The agent is killed (SIGKILL, as a power cut does)
 * part-way through and started again; when the server is back every sale is there once, in order.
 */
const ready = haveTmux() && haveSocat();
const dir = tempDir('pos-offline-tui-');
const pty = new Pty(join(dir.path, 'printer'), join(dir.path, 'printer-device'));
const printer = new PrinterEmulator();
const tmux = new Tmux();
const S = 'offline';

/** Twenty cash sales and two no-sales while the server is gone, the agent killed after the eighth sale. */
const SALES = 20;
const KILL_AFTER = 8;
/** The sales typed at the TUI (by their place in the day); the others arrive on the counter websocket. */
const AT_TUI = new Set([0, 1, KILL_AFTER]);
/** Plug, status and reconnect waits are seconds by design; a loaded machine gets more. */
const DEADLINE_MS = 20_000;

let t: TestServer;
let m: CreatedMerchant;
let relay: Relay;
let agent: AgentProcess | undefined;
let counter: CounterClient | undefined;
let printerConn: SerialConnection | undefined;
let agentListen = '';
let api: PosApi;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The agent on its fixed local port, so the TUI finds it again after a restart. */
async function runAgent(): Promise<void> {
  agent = await spawnAgent([
    '--server', relay.url, '--api-key', m.keys.sk_test, '--data-dir', join(dir.path, 'agent'), '--simulate', '1', '--heartbeat-ms', '500',
    '--printer', pty.agentEnd, '--receipts', 'always', '--name', 'Till 1', '--listen', agentListen,
  ]);
  counter = await CounterClient.connect(agent.url);
  counter.send({ type: 'hello', protocol: 1 });
  counter.send({ type: 'subscribe', topics: ['readers', 'devices'] });
  await counter.next('welcome');
  // The drawer kicks only through a printer that answers its status.
  await eventually(() => {
    const online = counter!.messages.some((msg) =>
      msg.type === 'devices' ? msg.devices.some((d) => d.id === 'printer' && d.status === 'online') : msg.type === 'device' && msg.device.id === 'printer' && msg.device.status === 'online',
    );
    return online || undefined;
  }, DEADLINE_MS);
}

const kicks = (from: number) => printer.decoder.count('kick', from);
/** The agent's last word on its printer's queue length, from the counter's devices topic. */
function printerQueued(): number | null | undefined {
  for (const msg of [...counter!.messages].reverse()) {
    const device = msg.type === 'devices' ? msg.devices.find((d) => d.id === 'printer') : msg.type === 'device' && msg.device.id === 'printer' ? msg.device : undefined;
    if (device) return device.queued;
  }
  return undefined;
}
const screen = () => tmux.screen(S);

beforeAll(async () => {
  if (!ready) return;
  t = await startTestServer();
  m = await t.merchant('Outage Bakery');
  api = new PosApi({ server: t.url, apiKey: m.keys.sk_test });
  relay = new Relay(Number(new URL(t.url).port));
  await relay.up();
  await pty.plug();
  printerConn = await nodeSerialBinding.open(pty.deviceEnd, 9600);
  printerConn.onData(printer.attach((bytes) => printerConn!.write(bytes)));
  agentListen = `127.0.0.1:${await freePort()}`;
  await runAgent();
  tmux.start(S, [`POS_CONFIG_DIR=${THROWAWAY_CONFIG_DIR}`, process.execPath, POS_BIN, 'tui', '--agent', agent!.url, '--server', relay.url, '--api-key', m.keys.sk_test]);
  await tmux.waitFor(S, 'Press Enter to charge.', 40_000);
  await tmux.waitFor(S, '● online', DEADLINE_MS);
}, 120_000);

afterAll(async () => {
  tmux.kill();
  counter?.close();
  await agent?.stop('SIGKILL');
  await printerConn?.close();
  await pty.unplug();
  await relay?.down();
  await t?.stop();
  dir.cleanup();
});

describe.skipIf(!ready)('cash at the counter TUI through an outage and a killed agent (tmux, 80×24)', () => {
  it('takes 20 cash sales and 2 no-sales with the server gone, and syncs each once, in order, at its till', async () => {
    const readers = (await api.listReaders()).data;
    expect(readers).toHaveLength(1);
    const till = readers[0]!;
    const mark = printer.mark;
    await relay.down();
    await tmux.waitFor(S, 'Offline: cash only · 0 sales waiting to sync', DEADLINE_MS);
    expect(screen()).toContain('⚠ OFFLINE: cash only');

    // A card payment is refused in words, and leaves nothing to sync.
    tmux.burst(S, '5\r');
    await tmux.waitFor(S, 'Offline: cash only. Cards need the server');
    tmux.keys(S, 'Escape');
    await tmux.waitFor(S, 'Amount  _');

    const amounts = Array.from({ length: SALES }, (_, i) => 1100 + i * 25);
    const refs: string[] = [];
    const money = (minor: number) => (minor / 100).toFixed(2);
    const sell = async (i: number) => {
      const amount = amounts[i]!;
      if (AT_TUI.has(i)) {
        tmux.burst(S, money(amount));
        await tmux.waitFor(S, `Amount  ${money(amount)}_`);
        tmux.keys(S, '$');
        await tmux.waitFor(S, `CASH SALE  $${money(amount)} due`);
        // Enter alone: the exact cash.
        tmux.keys(S, 'Enter');
        const done = await tmux.waitFor(S, /Not yet synced: kept on this till as (OFF-\S+) \((\d+) waiting to sync\)/);
        expect(done).toContain('Drawer opened.');
        expect(done).toContain('Receipt printing.');
        const [, ref, waiting] = /Not yet synced: kept on this till as (OFF-\S+) \((\d+) waiting to sync\)/.exec(done)!;
        expect(Number(waiting)).toBe(refs.length + 1);
        refs.push(ref!);
        tmux.keys(S, 'Enter');
        await tmux.waitFor(S, 'Press Enter to charge.');
        return;
      }
      const res = await counter!.command({ type: 'cash_sale', request_id: randomUUID(), amount, amount_tendered: amount, reader: till.processor_terminal_id, staff: 'ana' });
      expect(res.ok, JSON.stringify(res.error)).toBe(true);
      const sale = res.data as { transaction: unknown; drawer_opened: boolean; receipt: string; offline: { local_reference: string; waiting: number } };
      expect(sale).toMatchObject({ transaction: null, drawer_opened: true, receipt: 'queued', offline: { waiting: refs.length + 1 } });
      refs.push(sale.offline.local_reference);
    };
    let noSales = 0;
    const noSale = async () => {
      tmux.keys(S, 'o');
      await tmux.waitFor(S, 'Drawer opened (no sale).');
      noSales += 1;
      // Counted from the start, not from the key press: the last sale's kick can still be on its way
      // down the pty when a loaded machine shows its screen, and would be counted as this one's.
      await eventually(() => (kicks(mark) === refs.length + noSales ? true : undefined), DEADLINE_MS);
    };

    for (let i = 0; i < KILL_AFTER; i += 1) await sell(i);
    await noSale();
    await tmux.waitFor(S, `Offline: cash only · ${KILL_AFTER} sales waiting to sync`);
    // Printed before the power goes: a receipt half-sent at the kill would print again, whole, after it.
    await eventually(() => (printer.receipts(mark).length === KILL_AFTER ? true : undefined), DEADLINE_MS);
    // And known printed by the agent: a receipt the printer has whole but the agent has not yet
    // taken off its queue on disk is printed again after the kill (at least once, by design).
    await eventually(() => (printerQueued() === 0 ? true : undefined), DEADLINE_MS);

    // The power goes at the till: the agent dies without a word, and comes back with the server still gone.
    counter!.close();
    await agent!.stop('SIGKILL');
    await runAgent();
    expect(await counter!.next('offline')).toMatchObject({ waiting: KILL_AFTER });
    // The TUI finds the agent again on its port, still offline, still counting what waits.
    await tmux.waitFor(S, `Offline: cash only · ${KILL_AFTER} sales waiting to sync`, DEADLINE_MS);
    for (let i = KILL_AFTER; i < SALES; i += 1) await sell(i);
    await noSale();
    await tmux.waitFor(S, `Offline: cash only · ${SALES} sales waiting to sync`);
    expect(new Set(refs).size).toBe(SALES);

    // A kick per sale and per no-sale; a receipt per sale, marked not yet synced with its own reference.
    expect(kicks(mark)).toBe(SALES + 2);
    const receipts = await eventually(() => (printer.receipts(mark).length >= SALES ? printer.receipts(mark) : undefined), DEADLINE_MS);
    expect(receipts).toHaveLength(SALES);
    for (const [i, r] of receipts.entries()) {
      expect(r.lines.join('\n')).toContain('NOT YET SYNCED');
      expect(r.lines.join('\n')).toContain(refs[i]!);
    }

    // The server is back: the queue drains, in order, once each.
    await relay.up();
    await tmux.waitWithout(S, /waiting to sync|OFFLINE/, 30_000);
    await tmux.waitFor(S, '● connected (agent)');
    const all = (await api.listTransactions({ size: 100 })).data;
    expect(all).toHaveLength(SALES);
    const synced = [...all].reverse();
    expect(synced.map((x) => [x.offline_reference, x.amount])).toEqual(refs.map((r, i) => [r, amounts[i]]));
    for (const x of synced) expect(x).toMatchObject({ payment_method_type: 'cash', status: 'succeeded', terminal_id: till.id, reader_id: till.processor_terminal_id, location_id: till.location_id });
    const times = synced.map((x) => Date.parse(x.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // The close-out of the till's location and reader counts each sale once, and the drawer balances.
    const locations = (await api.listLocations()).data;
    const location = locations.find((l) => l.id === till.location_id)!;
    const taken = amounts.reduce((a, b) => a + b, 0);
    const report = computeDayReport({ date: localDate(), currency: 'usd', transactions: all, readers, locations, location: location.display_name, float: 5000, countedCash: 5000 + taken });
    expect(report.locations.map((b) => [b.name, b.succeeded.count, b.succeeded.amount])).toEqual([[location.display_name, SALES, taken]]);
    expect(report.readers.map((b) => [b.name, b.succeeded.count])).toEqual([[till.name, SALES]]);
    expect(report.tender).toMatchObject({ expected_cash: 5000 + taken, over_short: 0 });
  }, 300_000);
});
