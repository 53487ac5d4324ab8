import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenSecret } from '../shared/webhook-signing.js';
import { client } from './helpers/api.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { POS_BIN, runCli, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

// @backend-once what the CLI prints, forwards and exits with; deliveries and the event log are webhooks-delivery's and event-visibility's, on both backends.

let t: TestServer;
let key: string;
let liveKey: string;
let r: Receiver;

beforeAll(async () => {
  t = await startTestServer();
  const m = await t.merchant();
  key = m.keys.sk_test;
  liveKey = m.keys.sk_live;
  r = await startReceiver();
});
afterAll(async () => {
  await r.close();
  await t.stop();
});

describe('pos listen, pos trigger, pos events', () => {
  it('forwards each event as it happens, signed with the listen secret, one line per event', async () => {
    const listen = spawn(process.execPath, [POS_BIN, 'listen', '--forward-to', r.url, '--server', t.url], { env: { ...process.env, POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR, POS_API_KEY: key } });
    let stdout = '';
    let stderr = '';
    listen.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    listen.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => listen.on('exit', resolve));
    try {
      await eventually(() => (stderr.includes('Ready!') ? true : undefined), 10_000);
      const secret = listenSecret(key);
      expect(stderr).toContain(secret);

      const triggered = await runCli(['trigger', 'payment.succeeded', '--server', t.url, '--api-key', key, '--json']);
      expect(triggered.status, triggered.stderr).toBe(0);
      const payment = (JSON.parse(triggered.stdout) as { data: { id: string; status: string } }).data;

      await eventually(() => (r.received.filter((x) => x.event.data.id === payment.id).length === 2 ? true : undefined), 10_000);
      const got = r.received.filter((x) => x.event.data.id === payment.id);
      expect(got.map((x) => x.type)).toEqual(['payment.created', 'payment.succeeded']);
      for (const x of got) expect(r.verify(secret, x)).toEqual(x.event);
      await eventually(() => (stdout.trim().split('\n').length >= 2 ? true : undefined));
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toMatch(/--> payment\.created \[evt_\w+\]\s+\[200\] POST http:\/\/127\.0\.0\.1:\d+\/hooks/);
      expect(lines[1]).toMatch(/--> payment\.succeeded \[evt_\w+\]\s+\[200\]/);
    } finally {
      listen.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('prints the listen secret on request, and refuses bad invocations with exit code 2', async () => {
    const secret = await runCli(['listen', '--print-secret', '--api-key', key]);
    expect(secret.status).toBe(0);
    expect(secret.stdout.trim()).toBe(listenSecret(key));
    const noKey = await runCli(['events', 'list', '--server', t.url]);
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/^pos: .*API key/);
    expect((await runCli(['trigger', 'payment.exploded', '--server', t.url, '--api-key', key])).status).toBe(2);
    expect((await runCli(['trigger', 'payment.succeeded', '--server', t.url, '--api-key', liveKey])).status).toBe(2);
    expect((await runCli(['listen', '--forward-to', 'nope', '--server', t.url, '--api-key', key])).status).toBe(2);
  });

  it('lists, shows and resends events', async () => {
    const endpoint = await client(t.url, key).post<{ data: { id: string } }>('/v1/webhook-endpoints', { url: r.url, events: ['payment.failed'] });
    const triggered = await runCli(['trigger', 'payment.failed', '--server', t.url, '--api-key', key]);
    expect(triggered.status, triggered.stderr).toBe(0);
    expect(triggered.stdout).toMatch(/Triggered payment\.failed: payment txn_\w+ .* status failed/);

    const list = await runCli(['events', 'list', '--type', 'payment.failed', '--json', '--server', t.url, '--api-key', key]);
    expect(list.status, list.stderr).toBe(0);
    const events = (JSON.parse(list.stdout) as { data: { id: string; type: string; data: { is_test: boolean } }[] }).data;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'payment.failed', data: { is_test: true } });
    const id = events[0]?.id ?? '';
    await eventually(async () => {
      const res = await client(t.url, key).get<{ data: { deliveries: { status: string }[] } }>(`/v1/events/${id}`);
      return res.body.data.deliveries[0]?.status === 'delivered' ? true : undefined;
    });

    const table = await runCli(['events', 'list', '--server', t.url, '--api-key', key]);
    expect(table.stdout).toMatch(/^ID\s+TYPE\s+MODE\s+OBJECT\s+CREATED_AT\n\S+\s+\S+\s+test\s/);
    const detail = await runCli(['events', 'get', id, '--server', t.url, '--api-key', key]);
    expect(detail.status).toBe(0);
    expect(detail.stdout).toContain(`delivery to ${r.url}`);
    expect(detail.stdout).toMatch(/\d+\s+\d+\s*$/m);

    const resend = await runCli(['events', 'resend', id, '--endpoint', endpoint.body.data.id, '--server', t.url, '--api-key', key]);
    expect(resend.status, resend.stderr).toBe(0);
    await eventually(() => (r.acceptedIds().filter((x) => x === id).length === 2 ? true : undefined));

    const missing = await runCli(['events', 'get', 'evt_doesnotexist', '--server', t.url, '--api-key', key]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^pos: No such event \(resource_missing\)/);
    expect((await runCli(['events', 'get', 'nope', '--server', t.url, '--api-key', key])).status).toBe(2);
  });
});

describe('pos webhooks get, update and roll-secret', () => {
  it('reads, changes and rolls an endpoint; rolling asks first', async () => {
    const env = { POS_SERVER_URL: t.url, POS_API_KEY: key };
    const made = (await client(t.url, key).post<{ data: { id: string; reference: string; secret: string } }>('/v1/webhook-endpoints', { url: 'https://example.com/hooks' })).body.data;
    const got = await runCli(['webhooks', 'get', made.reference, '--json'], { env });
    expect(JSON.parse(got.stdout)).toMatchObject({ data: { id: made.id, url: 'https://example.com/hooks', status: 'active' } });
    const off = await runCli(['webhooks', 'update', made.id, '--events', 'payment.succeeded,payment.failed', '--description', 'shop app', '--disable', '--json'], { env });
    expect(JSON.parse(off.stdout)).toMatchObject({ data: { status: 'disabled', events: ['payment.succeeded', 'payment.failed'], description: 'shop app' } });
    const on = await runCli(['webhooks', 'update', made.id, '--enable', '--description', '', '--json'], { env });
    expect(JSON.parse(on.stdout)).toMatchObject({ data: { status: 'active', description: null } });
    expect((await runCli(['webhooks', 'update', made.id], { env })).status).toBe(2);
    expect((await runCli(['webhooks', 'update', made.id, '--enable', '--disable'], { env })).status).toBe(2);

    const refused = await runCli(['webhooks', 'roll-secret', made.id], { env });
    expect(refused.status).toBe(2);
    const rolled = await runCli(['webhooks', 'roll-secret', made.id, '--yes'], { env });
    expect(rolled.status, rolled.stderr).toBe(0);
    const secret = /Signing secret \(shown once\): (\S+)/.exec(rolled.stdout)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(made.secret);
  });
});
