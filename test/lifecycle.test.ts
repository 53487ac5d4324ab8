import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { client, type Json } from './helpers/api.js';
import { pos } from './helpers/cli.js';
import { adminMerchant, posAdmin, spawnedServers } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

const { dataDir, serverOn } = spawnedServers();

describe('pos server lifecycle', () => {
  it('answers /healthz, tags every response with a Request-Id, and logs JSON lines', async () => {
    const server = await serverOn(dataDir());
    const health = await client(server.url).get<Json>('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ids = new Set<string>();
    for (const path of ['/healthz', '/v1/merchant', '/nope']) {
      const id = (await client(server.url).get(path)).headers.get('request-id');
      expect(id).toMatch(/^req_/);
      ids.add(id ?? '');
    }
    expect(ids.size).toBe(3);
    const logged = () => server.logs.filter((l) => l.includes('"msg":"request"')).map((l) => (JSON.parse(l) as { req_id: string }).req_id);
    await eventually(() => ([...ids].every((id) => logged().includes(id)) ? true : undefined));
  });

  it('serves merchants and keys created and rolled by the admin CLI while it runs', async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const m = await adminMerchant(dir, 'Live Edit Café');
    expect(Object.keys(m).sort()).toEqual(['api_keys', 'business_name', 'country', 'default_currency', 'id']);
    expect(m.api_keys.sk_test).toMatch(/^sk_test_[0-9A-Za-z]{43}$/);
    expect(m.api_keys.sk_live).toMatch(/^sk_live_[0-9A-Za-z]{43}$/);
    expect(m.api_keys.pk_test).toMatch(/^pk_test_[0-9A-Za-z]{43}$/);
    expect(m.api_keys.pk_live).toMatch(/^pk_live_[0-9A-Za-z]{43}$/);
    const res = await client(server.url, m.api_keys.sk_test).get<{ data: Json }>('/v1/merchant');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: m.id, business_name: 'Live Edit Café' });

    const list = await posAdmin(dir, ['merchant', 'list', '--json']);
    expect(list.status).toBe(0);
    expect((JSON.parse(list.stdout) as { data: { id: string }[] }).data.map((x) => x.id)).toEqual([m.id]);

    const roll = await posAdmin(dir, ['keys', 'roll', '--merchant', m.id, '--mode', 'live', '--grace-hours', '0', '--json']);
    expect(roll.status, roll.stderr).toBe(0);
    const rolled = JSON.parse(roll.stdout) as { keys: { mode: string; key: string }[] };
    expect(rolled.keys).toHaveLength(1);
    expect((await client(server.url, m.api_keys.sk_live).get('/v1/merchant')).status).toBe(401);
    expect((await client(server.url, rolled.keys[0]?.key).get('/v1/merchant')).status).toBe(200);
    expect((await client(server.url, m.api_keys.sk_test).get('/v1/merchant')).status).toBe(200);

    const unknown = await posAdmin(dir, ['keys', 'roll', '--merchant', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^pos: no merchant/);
  });

  it('drains an in-flight request on SIGTERM and exits 0', async () => {
    const dir = dataDir();
    const m = await adminMerchant(dir, 'Drain');
    const server = await serverOn(dir);
    const { port, hostname } = new URL(server.url);
    const body = JSON.stringify({ name: 'in flight' });
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /v1/customers HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${m.api_keys.sk_test}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    // The request is mid-body when the signal arrives.
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode).toBeNull();
    socket.write(body.slice(5));
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    expect(await server.exited).toBe(0);

    // What it acknowledged is there after a restart.
    const again = await serverOn(dir);
    const list = await client(again.url, m.api_keys.sk_test).get<{ data: { name: string }[] }>('/v1/customers');
    expect(list.body.data.map((c) => c.name)).toEqual(['in flight']);
  });

  it('stops on SIGHUP as on SIGTERM: the request in flight answered, the stop logged, exit 0', async () => {
    const dir = dataDir();
    const m = await adminMerchant(dir, 'Hang Up');
    const server = await serverOn(dir);
    const { port, hostname } = new URL(server.url);
    const body = JSON.stringify({ name: 'hung up' });
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Expect: 100-continue makes the server say when it holds the request: only then does the terminal hang up.
    socket.write(
      `POST /v1/customers HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${m.api_keys.sk_test}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    await eventually(() => (response.startsWith('HTTP/1.1 100') ? true : undefined), 10_000);
    const logged = (msg: string) => server.logs.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; signal?: string }) : undefined)).find((l) => l?.msg === msg);
    server.child.kill('SIGHUP');
    expect(await eventually(() => logged('draining'), 10_000)).toMatchObject({ signal: 'SIGHUP' });
    expect(server.child.exitCode).toBeNull();
    socket.write(body);
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201/);
    expect(await server.exited).toBe(0);
    expect(logged('pos server stopped')).toBeDefined();
  });

  it('refuses bad flags with exit code 2 and one line on stderr', async () => {
    const result = await pos(['server', '--port', 'seventy', '--data-dir', dataDir()]);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^pos: invalid configuration for port/);
    const missing = await pos(['admin', 'merchant', 'create']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--business-name/);
  });
});
