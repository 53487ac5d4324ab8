import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { UPSTREAM_PATH } from '../shared/agent-upstream.js';
import type { Device } from '../shared/api/types.js';
import type { SerialConnection } from '../agent/ports.js';
import { nodeSerialBinding } from '../agent/ports.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client, type Json } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { PrinterEmulator, Pty } from './helpers/pty.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveSocat } from './helpers/tools.js';

/**
 * Counter devices are first-class on the server: a real agent process drives a receipt printer
 * and a customer display on socat pty pairs, reports them over its upstream websocket, and the
 * server lists them (`GET /v1/terminal/devices`, `pos readers`) and takes them offline with their
 * agent, as it does readers.
 */
const socatAvailable = haveSocat();

/** A 500 ms heartbeat gives a 1.5 s presence TTL (three heartbeats). */
const HEARTBEAT_MS = 500;
const TTL_MS = 3 * HEARTBEAT_MS;
/**
 * The agent notices an unplug within 2 s and reports it within 200 ms more; a loaded machine's
 * scheduling gets the rest of the "few seconds" the counter is promised.
 */
const UNPLUG_DEADLINE_MS = 5_000;

const dir = tempDir('pos-devices-');
const printerPty = new Pty(join(dir.path, 'printer'), join(dir.path, 'printer-device'));
const displayPty = new Pty(join(dir.path, 'display'), join(dir.path, 'display-device'));
const agentDir = join(dir.path, 'agent');
const printer = new PrinterEmulator();
let printerConn: SerialConnection | undefined;

let t: TestServer;
let m: CreatedMerchant;
let agent: AgentProcess | undefined;

const devices = async (key = m.keys.sk_test) => {
  const res = await client(t.url, key).get<{ data: Device[] }>('/v1/terminal/devices');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};
const ofAgent = async (agentId: string) => (await devices()).filter((d) => d.agent_id === agentId);
const waitDevices = (agentId: string, where: (ds: Device[]) => boolean, timeoutMs = 10_000) =>
  eventually(async () => {
    const ds = await ofAgent(agentId);
    return where(ds) ? ds : undefined;
  }, timeoutMs);
const byKind = (ds: Device[], kind: Device['kind']) => ds.find((d) => d.kind === kind);

async function attachPrinter(): Promise<void> {
  const conn = await nodeSerialBinding.open(printerPty.deviceEnd, 9600);
  conn.onData(printer.attach((bytes) => conn.write(bytes)));
  printerConn = conn;
}

async function startAgent(): Promise<AgentProcess> {
  agent = await spawnAgent([
    '--server', t.url, '--api-key', m.keys.sk_test, '--data-dir', agentDir, '--simulate', '1', '--heartbeat-ms', String(HEARTBEAT_MS),
    '--name', 'Till 1', '--printer', printerPty.agentEnd, '--display', displayPty.agentEnd,
  ]);
  return agent;
}

beforeAll(async () => {
  if (!socatAvailable) return;
  t = await startTestServer();
  m = await t.merchant('Device Shop');
  await printerPty.plug();
  await displayPty.plug();
  await attachPrinter();
  await startAgent();
});

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await printerConn?.close();
  await printerPty.unplug();
  await displayPty.unplug();
  await t?.stop();
  dir.cleanup();
});

describe.skipIf(!socatAvailable)('counter devices on the server', () => {
  it('lists the agent\'s printer and display through the API, with the printer\'s status', async () => {
    const ds = await waitDevices(agent!.agentId, (list) => list.length === 2 && list.every((d) => d.status === 'online'));
    expect(byKind(ds, 'receipt_printer')).toMatchObject({
      object: 'terminal.device',
      agent_name: 'Till 1',
      device_id: 'printer',
      target: printerPty.agentEnd,
      connection: 'serial',
      last_error: null,
      printer: { paper: 'ok', cover_open: false, drawer_open: false, queued: 0 },
      is_test: true,
    });
    expect(byKind(ds, 'customer_display')).toMatchObject({ device_id: 'display', target: displayPty.agentEnd, status: 'online', printer: null });
    expect(ds.every((d) => d.last_seen_at !== null)).toBe(true);
    // The live key's mode has none.
    expect(await devices(m.keys.sk_live)).toEqual([]);
  });

  it('keeps them seen by the heartbeats, while an idle agent sends no device report', async () => {
    const row = () => t.server.store.db.selectFrom('counter_devices').select(['device_id', 'updated_at', 'last_seen_at']).where('agent_id', '=', agent!.agentId).orderBy('device_id').execute();
    const before = await row();
    await new Promise((r) => setTimeout(r, 4 * HEARTBEAT_MS));
    const after = await row();
    // updated_at moves only with a report; last_seen_at with every heartbeat.
    expect(after.map((r) => r.updated_at)).toEqual(before.map((r) => r.updated_at));
    expect(after.every((r, i) => Number(r.last_seen_at) > Number(before[i]!.last_seen_at))).toBe(true);
  });

  it('follows the printer\'s paper, in words', async () => {
    printer.status = { ...printer.status, paperOut: true };
    const ds = await waitDevices(agent!.agentId, (list) => byKind(list, 'receipt_printer')?.printer?.paper === 'out');
    expect(byKind(ds, 'receipt_printer')).toMatchObject({ status: 'online', last_error: 'Printer out of paper' });
    printer.status = { ...printer.status, paperOut: false };
    await waitDevices(agent!.agentId, (list) => byKind(list, 'receipt_printer')?.printer?.paper === 'ok');
  });

  it('shows them in `pos readers`, below the readers, and in its --json', async () => {
    const env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
    const listed = json<{ data: Json[]; devices: Device[] }>(await runCli(['readers', 'list', '--json'], { env }));
    expect(listed.data).toHaveLength(1);
    expect(listed.devices.map((d) => d.device_id).sort()).toEqual(['display', 'printer']);
    const table = await runCli(['readers'], { env });
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('DEVICE'));
    expect(header).toBeGreaterThan(lines.findIndex((l) => l.startsWith('NAME')));
    expect(lines[header]).toMatch(/DEVICE\s+AGENT\s+STATUS\s+LAST_SEEN\s+PAPER\s+COVER\s+DRAWER\s+QUEUED\s+LAST_ERROR\s+TARGET/);
    expect(table.stdout).toMatch(/printer\s+Till 1\s+online\s+\d+s ago\s+ok\s+closed\s+closed\s+0\s+\//);
    expect(table.stdout).toMatch(/display\s+Till 1\s+online\s+\d+s ago\s+\//);
  });

  it('has a device offline through the API within seconds of its cable being pulled, and back when plugged in', async () => {
    await displayPty.unplug();
    const pulled = Date.now();
    const ds = await waitDevices(agent!.agentId, (list) => byKind(list, 'customer_display')?.status === 'offline', UNPLUG_DEADLINE_MS);
    expect(Date.now() - pulled).toBeLessThan(UNPLUG_DEADLINE_MS);
    expect(byKind(ds, 'customer_display')?.last_error).toBeTruthy();
    expect(byKind(ds, 'receipt_printer')?.status).toBe('online');

    await printerConn?.close();
    await printerPty.unplug();
    const printerPulled = Date.now();
    const after = await waitDevices(agent!.agentId, (list) => byKind(list, 'receipt_printer')?.status === 'offline', UNPLUG_DEADLINE_MS);
    expect(Date.now() - printerPulled).toBeLessThan(UNPLUG_DEADLINE_MS);
    // An offline printer's status is not known: null, not the last answer.
    expect(byKind(after, 'receipt_printer')?.printer).toMatchObject({ paper: null, cover_open: null, drawer_open: null });

    await printerPty.plug();
    await displayPty.plug();
    await attachPrinter();
    await waitDevices(agent!.agentId, (list) => list.length === 2 && list.every((d) => d.status === 'online'), UNPLUG_DEADLINE_MS);
  });

  it('takes them offline within the TTL when the agent is killed, and at once when it stops', async () => {
    const agentId = agent!.agentId;
    await agent!.stop('SIGKILL');
    const killed = Date.now();
    const lapsed = await waitDevices(agentId, (list) => list.every((d) => d.status === 'offline'), TTL_MS + 5_000);
    expect(Date.now() - killed).toBeLessThan(TTL_MS + 3_000);
    expect(lapsed.map((d) => d.last_error)).toEqual(['Its agent is offline', 'Its agent is offline']);

    await startAgent();
    expect(agent!.agentId).toBe(agentId);
    await waitDevices(agentId, (list) => list.length === 2 && list.every((d) => d.status === 'online' && d.last_error === null));
    expect(await agent!.stop('SIGTERM')).toBe(0);
    agent = undefined;
    const stopped = await ofAgent(agentId);
    expect(stopped.map((d) => [d.status, d.last_error])).toEqual([
      ['offline', 'Its agent stopped'],
      ['offline', 'Its agent stopped'],
    ]);
  });
});

describe.skipIf(!socatAvailable)('device reports from a hostile client', () => {
  it('refuses garbage with an error, writes none of it, and keeps the connection and the server up', async () => {
    const ws = new WebSocket(t.url.replace('http', 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${m.keys.sk_test}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const replies: Json[] = [];
    ws.on('message', (data: Buffer) => replies.push(JSON.parse(data.toString()) as Json));
    const agentId = randomUUID();
    ws.send(JSON.stringify({ type: 'hello', protocol: 1, agent_id: agentId, name: 'Mallory', version: '1', heartbeat_ms: 60_000, cursor: null }));
    await eventually(() => (replies.some((r) => r.type === 'welcome') ? true : undefined));

    const good = { id: 'printer', kind: 'receipt_printer', target: '/dev/ttyS0', status: 'online', last_error: null, paper: 'ok', cover_open: false, drawer_open: false, queued: 0 };
    const garbage: unknown[] = [
      { type: 'devices' },
      { type: 'devices', devices: 'printer' },
      { type: 'devices', devices: [{ ...good, kind: 'toaster' }] },
      // A good device and a bad one: nothing of the message is stored.
      { type: 'devices', devices: [good, { ...good, id: 'display', status: 'exploded' }] },
      { type: 'devices', devices: [good, good] },
      { type: 'devices', devices: [{ ...good, id: '../../etc/passwd' }] },
      { type: 'devices', devices: [{ ...good, admin: true }] },
      { type: 'devices', devices: [{ ...good, target: 'x'.repeat(10_000) }] },
      { type: 'devices', devices: [{ ...good, last_error: 'nul\u0000byte' }] },
      { type: 'devices', devices: [{ ...good, queued: -1 }] },
      { type: 'devices', devices: [{ ...good, queued: 1e300 }] },
      { type: 'devices', devices: Array.from({ length: 33 }, (_, i) => ({ ...good, id: `p${i}` })) },
      { type: 'devices', devices: [{ ...good, cover_open: 'yes' }] },
    ];
    for (const message of garbage) ws.send(JSON.stringify(message));
    const errors = await eventually(() => {
      const found = replies.filter((r) => r.type === 'error');
      return found.length === garbage.length ? found : undefined;
    });
    for (const error of errors) expect(error).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_message' } });
    expect(await ofAgent(agentId)).toEqual([]);
    expect(ws.readyState).toBe(WebSocket.OPEN);

    // The same connection is still heard: a good report is stored, and a later one replaces it whole.
    ws.send(JSON.stringify({ type: 'devices', devices: [good, { ...good, id: 'display', kind: 'customer_display', target: 'tcp:10.0.0.9:9100', paper: null, cover_open: null, drawer_open: null, queued: null }] }));
    const stored = await waitDevices(agentId, (list) => list.length === 2);
    expect(byKind(stored, 'customer_display')).toMatchObject({ agent_name: 'Mallory', connection: 'tcp', printer: null });
    ws.send(JSON.stringify({ type: 'devices', devices: [{ ...good, status: 'offline', paper: null, cover_open: null, drawer_open: null, last_error: 'Printer offline' }] }));
    const replaced = await waitDevices(agentId, (list) => list.length === 1 && list[0]!.status === 'offline');
    expect(replaced[0]).toMatchObject({ device_id: 'printer', last_error: 'Printer offline' });
    ws.close();
    expect((await client(t.url).get('/healthz')).status).toBe(200);
  });
});
