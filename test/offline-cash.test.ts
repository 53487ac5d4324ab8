import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../agent/agent.js';
import type { SerialBinding, SerialConnection } from '../agent/ports.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { PosApi } from '../shared/api/client.js';
import type { Transaction } from '../shared/api/types.js';
import { loadAgentConfig } from '../shared/config.js';
import { computeDayReport, localDate, reportCsv } from '../cli/report.js';
import { CounterClient } from './helpers/agent.js';
import { PrinterEmulator } from './helpers/pty.js';
import { Relay } from './helpers/relay.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * A till sells cash through an outage: the agent and the server in this process, the agent's link
 * to the server through a TCP relay the test cuts and restores (to the agent, a server that went
 * away), a printer emulator on the agent's serial port decoding the ESC/POS bytes.
 */

/** The agent's serial port, wired to the printer emulator. */
function serialTo(printer: PrinterEmulator): SerialBinding {
  return {
    list: async () => [],
    exists: () => true,
    async open(): Promise<SerialConnection> {
      const listeners: ((chunk: Buffer) => void)[] = [];
      const feed = printer.attach((bytes) => setImmediate(() => listeners.forEach((l) => l(Buffer.from(bytes)))));
      return {
        write: (data) => feed(typeof data === 'string' ? Buffer.from(data, 'latin1') : data),
        onData: (l) => listeners.push(l),
        onClose: () => undefined,
        close: async () => undefined,
      };
    },
  };
}

const dir = tempDir('pos-offline-');
const printer = new PrinterEmulator();
let t: TestServer;
let m: CreatedMerchant;
let relay: Relay;
let agent: RunningAgent | undefined;
let counter: CounterClient | undefined;

async function runAgent(): Promise<void> {
  const config = loadAgentConfig(
    { server: `http://127.0.0.1:${relay.port}`, apiKey: m.keys.sk_test, dataDir: join(dir.path, 'agent'), listen: '127.0.0.1:0', simulate: 1, heartbeatMs: 500, printer: '/dev/test-printer', receipts: 'always', name: 'Till 1' },
    {},
  );
  agent = await startAgent(config, { ports: { serial: serialTo(printer) }, logger: pino({ level: 'silent' }) });
  counter = await CounterClient.connect(agent.url);
  counter.send({ type: 'hello', protocol: 1 });
  counter.send({ type: 'subscribe', topics: ['readers', 'devices'] });
  await counter.next('welcome');
  // The drawer kicks only through a printer that answers its status: wait for the first answer.
  await eventually(() => {
    const printerOnline = counter!.messages.some((msg) =>
      msg.type === 'devices' ? msg.devices.some((d) => d.id === 'printer' && d.status === 'online') : msg.type === 'device' && msg.device.id === 'printer' && msg.device.status === 'online',
    );
    return printerOnline || undefined;
  }, 10_000);
}

async function stopAgent(): Promise<void> {
  await agent?.close();
  agent = undefined;
}

const cashSale = async (amount: number, reader: string) => {
  const res = await counter!.command({ type: 'cash_sale', request_id: randomUUID(), amount, amount_tendered: amount + 500, reader, staff: 'ana' });
  expect(res.ok, JSON.stringify(res.error)).toBe(true);
  return res.data as { transaction: Transaction | null; offline?: { local_reference: string; waiting: number }; drawer_opened: boolean; receipt: string };
};
/** An outage's worth of sales at one till, the agent restarted part-way through. */
const SALES = 20;
const RESTART_AFTER = 8;
const kicks = (from = 0) => printer.decoder.events.slice(from).filter((e) => e.type === 'kick').length;

let api: PosApi;
let till: { id: string; processor_terminal_id: string };

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Offline Café');
  api = new PosApi({ server: t.url, apiKey: m.keys.sk_test });
  relay = new Relay(Number(new URL(t.url).port));
  await relay.up();
  await runAgent();
  till = await eventually(() => {
    const readers = counter!.messages.flatMap((msg) => (msg.type === 'readers' ? msg.readers : msg.type === 'reader' ? [msg.reader] : []));
    return readers.find((r) => /^[0-9a-f-]{36}$/.test(r.id) && r.status === 'online');
  }, 15_000);
});

afterAll(async () => {
  await stopAgent();
  await relay?.down();
  await t?.stop();
  dir.cleanup();
});

describe('cash at the till through an outage', () => {
  it('books a cash sale to its reader and location, in the close-out and on its CSV', async () => {
    const sale = await cashSale(1000, till.processor_terminal_id);
    expect(sale).toMatchObject({ drawer_opened: true, receipt: 'queued' });
    const txn = sale.transaction!;
    const reader = (await api.listReaders()).data.find((r) => r.id === till.id)!;
    expect(txn).toMatchObject({ terminal_id: till.id, reader_id: till.processor_terminal_id, location_id: reader.location_id, offline_reference: null });
    expect(txn.created_by_key_id).toEqual(expect.any(String));
    const locations = (await api.listLocations()).data;
    const location = locations.find((l) => l.id === reader.location_id)!;
    const report = computeDayReport({ date: localDate(), currency: 'usd', transactions: (await api.listTransactions({ size: 100 })).data, readers: [reader], locations, location: location.display_name, float: 5000 });
    expect(report.locations.map((b) => [b.name, b.succeeded.count])).toEqual([[location.display_name, 1]]);
    expect(report.readers.map((b) => [b.name, b.succeeded.count])).toEqual([[reader.name, 1]]);
    expect(report.tender.expected_cash).toBe(6000);
    expect(reportCsv(report)).toContain(`,reader,${reader.name},1,10.00,`);
  });

  it('takes 20 cash sales and 2 no-sales with the server gone, across an agent restart, and syncs each once, in order', async () => {
    const existing = (await api.listTransactions({ size: 100 })).data.length;
    const mark = printer.mark;
    await relay.down();
    await counter!.next('upstream', (msg) => msg.status === 'disconnected', 10_000);

    // Twenty sales of distinct amounts, so order and once-only read straight off the synced rows.
    const amounts = Array.from({ length: SALES }, (_, i) => 1100 + i * 25);
    const refs: string[] = [];
    const sell = async (amount: number) => {
      const sale = await cashSale(amount, till.processor_terminal_id);
      expect(sale).toMatchObject({ transaction: null, drawer_opened: true, receipt: 'queued', offline: { waiting: refs.length + 1 } });
      refs.push(sale.offline!.local_reference);
    };
    const noSale = async () => {
      const res = await counter!.command({ type: 'open_drawer', request_id: randomUUID(), reason: 'no_sale', staff: 'ana' });
      expect(res.ok, JSON.stringify(res.error)).toBe(true);
    };
    for (const amount of amounts.slice(0, RESTART_AFTER)) await sell(amount);
    await noSale();
    // What the counter is told: offline, and how many wait.
    await counter!.next('offline', (msg) => msg.waiting === RESTART_AFTER);

    // The agent stops (a restart, a power cut after the commit) with the server still gone.
    await stopAgent();
    await runAgent();
    expect(await counter!.next('offline')).toMatchObject({ waiting: RESTART_AFTER, limit: null });
    expect(counter!.messages.find((msg) => msg.type === 'welcome')).toMatchObject({ upstream: 'disconnected' });
    for (const amount of amounts.slice(RESTART_AFTER)) await sell(amount);
    await noSale();
    expect(new Set(refs).size).toBe(SALES);
    // A refund cannot name a sale the server has not seen.
    await expect(api.getTransaction(refs[0]!)).rejects.toMatchObject({ status: 404 });

    // A kick per sale and per no-sale; a receipt per sale, each marked with its own local reference.
    expect(kicks(mark)).toBe(SALES + 2);
    const receipts = await eventually(() => {
      const printed = printer.receipts(mark);
      return printed.length >= SALES ? printed : undefined;
    }, 20_000);
    expect(receipts).toHaveLength(SALES);
    for (const [i, r] of receipts.entries()) {
      expect(r.lines.join('\n')).toContain('NOT YET SYNCED');
      expect(r.lines.join('\n')).toContain(refs[i]!);
      expect(r.qr).toBeNull();
    }

    await relay.up();
    await counter!.next('offline', (msg) => msg.waiting === 0, 30_000, counter!.messages.length - 1);
    const all = (await api.listTransactions({ size: 100 })).data;
    expect(all.length - existing).toBe(SALES);
    const synced = all.filter((x) => x.offline_reference !== null).reverse();
    expect(synced.map((x) => [x.offline_reference, x.amount])).toEqual(refs.map((r, i) => [r, amounts[i]]));
    for (const x of synced) expect(x).toMatchObject({ payment_method_type: 'cash', status: 'succeeded', terminal_id: till.id, reader_id: till.processor_terminal_id, metadata: { staff: 'ana' } });
    // Taken in order, dated when taken (not when synced).
    const times = synced.map((x) => Date.parse(x.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // The no-sales reach the audit trail once each, after the server is back.
    const noSales = await eventually(async () => {
      const entries = (await api.listAuditLog({ size: 100 })).data.filter((e) => e.operation === 'agent drawer_opened' && e.details?.reason === 'no_sale');
      return entries.length >= 2 ? entries : undefined;
    }, 15_000, 200);
    expect(noSales).toHaveLength(2);
    // The next sale goes straight to the server again.
    expect((await cashSale(1500, till.processor_terminal_id)).transaction).toMatchObject({ amount: 1500, offline_reference: null });

    // The close-out of the till's location and reader counts every sale once, and its drawer balances.
    const reader = (await api.listReaders()).data.find((r) => r.id === till.id)!;
    const locations = (await api.listLocations()).data;
    const location = locations.find((l) => l.id === reader.location_id)!;
    const day = (await api.listTransactions({ size: 100 })).data;
    const cashTaken = 1000 + amounts.reduce((a, b) => a + b, 0) + 1500;
    const report = computeDayReport({ date: localDate(), currency: 'usd', transactions: day, readers: [reader], locations, location: location.display_name, float: 5000, countedCash: 5000 + cashTaken });
    expect(report.locations.map((b) => [b.name, b.succeeded.count, b.succeeded.amount])).toEqual([[location.display_name, SALES + 2, cashTaken]]);
    expect(report.readers.map((b) => [b.name, b.succeeded.count])).toEqual([[reader.name, SALES + 2]]);
    expect(report.tender).toMatchObject({ expected_cash: 5000 + cashTaken, over_short: 0 });
  });
});
