import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { nodeSerialBinding, type SerialConnection } from '../agent/ports.js';
import { CounterClient, spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client, type Json } from './helpers/api.js';
import { POS_BIN, runCli, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { PrinterEmulator, Pty } from './helpers/pty.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveSocat, haveTmux } from './helpers/tools.js';
import { Tmux } from './helpers/tmux.js';

/**
 * A terminal location's receipt policy (always, ask, never): set through the API and the CLI, pushed
 * to a running agent over its upstream websocket, and obeyed by the agent's receipt printer (played
 * on a socat pty pair, its ESC/POS bytes decoded) and by the counter TUI's "Print receipt?".
 */
const socatAvailable = haveSocat();

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };
type Location = Json & { id: string; display_name: string; receipt_policy: string; tipping: unknown };
type ErrorBody = { error: { type: string; code?: string; param?: string; message: string } };

/** Printing or not is seen as bytes that never come: a quiet spell after the payment is paid. */
const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** As in counter-hardware.test.ts: the design notices within 2 s, a loaded machine gets longer. */
const DEVICE_DEADLINE_MS = 8_000;

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Policy Café');
  api = client(t.url, m.keys.sk_test);
});
afterAll(() => t?.stop());

describe('receipt_policy on terminal locations', () => {
  it('is always by default, takes always, ask or never on create and update, and shows in the location and the list', async () => {
    const plain = await api.post<{ data: Location }>('/v1/terminal/locations', { display_name: 'Plain', address: ADDRESS });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.data.receipt_policy).toBe('always');
    const asking = await api.post<{ data: Location }>('/v1/terminal/locations', { display_name: 'Asking', address: ADDRESS, receipt_policy: 'ask' });
    expect(asking.status).toBe(201);
    expect(asking.body.data.receipt_policy).toBe('ask');
    const changed = await api.post<{ data: Location }>(`/v1/terminal/locations/${plain.body.data.id}`, { receipt_policy: 'never' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data.receipt_policy).toBe('never');
    const listed = (await api.get<{ data: Location[] }>('/v1/terminal/locations')).body.data;
    expect(listed.map((l) => [l.display_name, l.receipt_policy])).toEqual([
      ['Plain', 'never'],
      ['Asking', 'ask'],
    ]);
  });

  it('refuses any other value with a 400 naming receipt_policy, and changes nothing', async () => {
    const location = (await api.get<{ data: Location[] }>('/v1/terminal/locations')).body.data[0]!;
    for (const bad of ['sometimes', 'ALWAYS', '', 1, true, null, ['ask']]) {
      const created = await api.post<ErrorBody>('/v1/terminal/locations', { display_name: 'Bad', address: ADDRESS, receipt_policy: bad });
      expect(created.status, JSON.stringify(bad)).toBe(400);
      expect(created.body.error, JSON.stringify(bad)).toMatchObject({ type: 'invalid_request_error', param: 'receipt_policy' });
      expect(created.body.error.message).toMatch(/receipt_policy/);
      const updated = await api.post<ErrorBody>(`/v1/terminal/locations/${location.id}`, { receipt_policy: bad });
      expect(updated.status, JSON.stringify(bad)).toBe(400);
      expect(updated.body.error, JSON.stringify(bad)).toMatchObject({ type: 'invalid_request_error', param: 'receipt_policy' });
    }
    const empty = await api.post<ErrorBody>(`/v1/terminal/locations/${location.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error.type).toBe('invalid_request_error');
    const missing = await api.post<ErrorBody>('/v1/terminal/locations/00000000-0000-4000-8000-000000000000', { receipt_policy: 'ask' });
    expect(missing.status).toBe(404);
    const listed = (await api.get<{ data: Location[] }>('/v1/terminal/locations')).body.data;
    expect(listed).toHaveLength(2);
    expect(listed.find((l) => l.id === location.id)?.receipt_policy).toBe('never');
  });

  it('changes the policy alone, leaving the tipping as it was; the CLI sets it by the location’s name', async () => {
    const tipping = { percentages: [10, 15, 20] };
    const created = await api.post<{ data: Location }>('/v1/terminal/locations', { display_name: 'Patio', address: ADDRESS, tipping });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const changed = await api.post<{ data: Location }>(`/v1/terminal/locations/${created.body.data.id}`, { receipt_policy: 'ask' });
    expect(changed.body.data).toMatchObject({ receipt_policy: 'ask', tipping: { currency: 'usd', percentages: [10, 15, 20] } });

    const cli = ['--server', t.url, '--api-key', m.keys.sk_test];
    const set = await runCli(['locations', 'receipts', 'Patio', 'never', ...cli]);
    expect(set.status, set.stderr).toBe(0);
    expect(set.stdout).toContain('Receipts at Patio: never');
    const wrong = await runCli(['locations', 'receipts', 'Patio', 'sometimes', ...cli]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/always, ask or never/);
    const made = await runCli(['locations', 'create', '--name', 'Kiosk', '--line1', '2 Pier', '--city', 'Oakland', '--postal-code', '94607', '--country', 'US', '--receipts', 'ask', '--json', ...cli]);
    expect(made.status, made.stderr).toBe(0);
    expect((JSON.parse(made.stdout) as { data: Location }).data.receipt_policy).toBe('ask');
    const list = await runCli(['locations', 'list', ...cli]);
    expect(list.stdout).toMatch(/Patio .*never/);
    expect(list.stdout).toMatch(/Kiosk .*ask/);
    const read = (await api.get<{ data: Location[] }>('/v1/terminal/locations')).body.data.find((l) => l.id === created.body.data.id);
    expect(read).toMatchObject({ receipt_policy: 'never', tipping: { percentages: [10, 15, 20] } });
  });
});

describe.skipIf(!socatAvailable)("the agent prints by its reader's location's policy (printer on a pty pair)", () => {
  const dir = tempDir('pos-policy-');
  const pty = new Pty(join(dir.path, 'printer'), join(dir.path, 'printer-device'));
  const printer = new PrinterEmulator();
  let conn: SerialConnection | undefined;
  let agent: AgentProcess;
  let counter: CounterClient;
  let reader: string;
  let locationId: string;
  let sale = 0;

  const setPolicy = async (policy: string) => {
    const res = await api.post<{ data: Location }>(`/v1/terminal/locations/${locationId}`, { receipt_policy: policy });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  /** The agent has the policy once the counter's reader shows it: it came over the upstream websocket. */
  const agentFollows = (policy: string) => eventually(() => (counter.latest(reader)?.receipt_policy === policy ? true : undefined), DEVICE_DEADLINE_MS);

  /** A card payment taken on the reader and approved, once the server has it paid. */
  async function approvedPayment(amount: number): Promise<string> {
    sale += 1;
    const started = await counter.command({ type: 'start_payment', request_id: `policy-sale-${sale}`, reader, amount });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const id = (started.data as { transaction: { id: string } }).transaction.id;
    const tap = await counter.command({ type: 'simulate_tap', request_id: `policy-tap-${sale}`, reader });
    expect(tap.ok, JSON.stringify(tap.error)).toBe(true);
    await eventually(async () => ((await api.get<{ data: { status: string } }>(`/v1/transactions/${id}`)).body.data.status === 'succeeded' ? true : undefined), DEVICE_DEADLINE_MS);
    await eventually(() => (counter.activities(reader).includes('approved') ? true : undefined), DEVICE_DEADLINE_MS);
    return id;
  }

  beforeAll(async () => {
    await pty.plug();
    conn = await nodeSerialBinding.open(pty.deviceEnd, 9600);
    const c = conn;
    c.onData(printer.attach((bytes) => c.write(bytes)));
    agent = await spawnAgent(['--server', t.url, '--api-key', m.keys.sk_test, '--data-dir', join(dir.path, 'agent'), '--simulate', '1', '--heartbeat-ms', '500', '--printer', pty.agentEnd]);
    counter = await CounterClient.connect(agent.url);
    counter.send({ type: 'hello', protocol: 1 });
    await counter.next('welcome');
    counter.send({ type: 'subscribe', topics: ['readers', 'transactions', 'devices'] });
    const readers = await counter.next('readers', (msg) => msg.readers.length === 1);
    reader = readers.readers[0]!.processor_terminal_id;
    await eventually(() => (counter.latest(reader)?.status === 'online' ? true : undefined), 10_000);
    const onServer = (await api.get<{ data: { processor_terminal_id: string; location_id: string }[] }>('/v1/terminal/readers')).body.data.find((r) => r.processor_terminal_id === reader);
    locationId = onServer!.location_id;
    await eventually(() => {
      const last = counter.messages.filter((msg) => msg.type === 'device' || msg.type === 'devices').at(-1);
      const state = last?.type === 'device' ? last.device : last?.type === 'devices' ? last.devices.find((d) => d.id === 'printer') : undefined;
      return state?.status === 'online' ? true : undefined;
    }, DEVICE_DEADLINE_MS);
  });

  afterAll(async () => {
    counter?.close();
    await agent?.stop();
    await conn?.close();
    await pty.unplug();
    dir.cleanup();
  });

  it('never: an approved payment prints nothing, and a reprint from the history still prints', async () => {
    await setPolicy('never');
    await agentFollows('never');
    const from = printer.mark;
    const id = await approvedPayment(1250);
    await quiet(2_000);
    expect(printer.receipts(from)).toHaveLength(0);
    const reprint = await counter.command({ type: 'print_receipt', request_id: 'policy-reprint-1', transaction_id: id });
    expect(reprint.ok, JSON.stringify(reprint.error)).toBe(true);
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    expect(receipt!.lines.join('\n')).toMatch(/Total +\$12\.50/);
  });

  it('a change to always reaches the running agent without a restart: the next approval prints', async () => {
    const pid = agent.child.pid;
    await setPolicy('always');
    await agentFollows('always');
    expect(agent.child.pid).toBe(pid);
    expect(agent.child.exitCode).toBeNull();
    const from = printer.mark;
    await approvedPayment(2000);
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    expect(receipt!.lines.join('\n')).toMatch(/Total +\$20\.00/);
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(1);
  });

  it('ask: a cash sale prints nothing by itself and says to ask; print_receipt prints it', async () => {
    await setPolicy('ask');
    await agentFollows('ask');
    const from = printer.mark;
    const cash = await counter.command({ type: 'cash_sale', request_id: 'policy-cash-1', amount: 700, amount_tendered: 1000, reader });
    expect(cash.ok, JSON.stringify(cash.error)).toBe(true);
    const data = cash.data as { transaction: { id: string }; receipt: string };
    expect(data.receipt).toBe('ask');
    await quiet(1_500);
    expect(printer.receipts(from)).toHaveLength(0);
    const yes = await counter.command({ type: 'print_receipt', request_id: 'policy-yes-1', transaction_id: data.transaction.id });
    expect(yes.ok).toBe(true);
    const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
    expect(receipt!.lines.join('\n')).toMatch(/Change +\$3\.00/);
  });

  describe.skipIf(!haveTmux())('the counter TUI asks "Print receipt? y/n" (tmux, 80×24)', () => {
    const term = new Tmux();
    const SESSION = 'pos-ask';
    const shown = () => term.screen(SESSION);
    const keys = (...k: string[]) => term.keys(SESSION, ...k);
    const waitFor = (text: string | RegExp, timeoutMs?: number) => term.waitFor(SESSION, text, timeoutMs);

    beforeAll(() => term.start(SESSION, [`POS_CONFIG_DIR=${THROWAWAY_CONFIG_DIR}`, process.execPath, POS_BIN, 'tui', '--agent', agent.url, '--server', t.url, '--api-key', m.keys.sk_test]));
    afterAll(() => term.kill());

    it('after an approval on an ask location: n prints nothing, y prints the receipt', async () => {
      await waitFor('Press Enter to charge.', 25_000);
      await waitFor('● online');
      let from = printer.mark;
      keys('6,50', 'Enter');
      await waitFor('WAITING FOR CARD');
      keys('s');
      const approved = await waitFor('Print receipt? y/n');
      expect(approved).toContain('✔ APPROVED  $6.50');
      keys('n');
      await eventually(() => (shown().includes('Print receipt? y/n') ? undefined : true));
      await quiet(1_500);
      expect(printer.receipts(from)).toHaveLength(0);

      keys('Enter');
      await waitFor('Press Enter to charge.');
      from = printer.mark;
      keys('4.25', 'Enter');
      await waitFor('WAITING FOR CARD');
      keys('s');
      await waitFor('Print receipt? y/n');
      keys('y');
      await waitFor('Receipt sent to the printer.');
      const [receipt] = await eventually(() => (printer.receipts(from).length ? printer.receipts(from) : undefined), DEVICE_DEADLINE_MS);
      expect(receipt!.lines.join('\n')).toMatch(/Total +\$4\.25/);
    });
  });
});
