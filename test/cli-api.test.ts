import { writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

/** `pos api`: any /v1 route from the command line, run in this process against a real server. */

let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
const dir = tempDir('pos-cli-api-');

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Api Shop');
  env = { POS_CONFIG_DIR: join(dir.path, 'config'), POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

type Txn = { id: string; amount: number; status: string; metadata: Record<string, string>; description: string | null };

describe('pos api', () => {
  it('POSTs typed and string fields, nested, with an Idempotency-Key that answers a repeat with the first payment', async () => {
    const args = ['api', 'POST', '/v1/transactions', '-d', 'amount=1250', '-d', 'currency=usd', '-f', 'metadata.order=42', '-d', 'metadata[till]=front', '--idempotency-key', 'cli-api-1'];
    const first = await runCli(args, { env });
    expect(first.status, first.stderr).toBe(0);
    const made = json<{ data: Txn }>(first).data;
    expect(made).toMatchObject({ amount: 1250, metadata: { order: '42', till: 'front' } });
    const again = await runCli(args, { env });
    expect(json<{ data: Txn }>(again).data.id).toBe(made.id);
  });

  it('GETs with query parameters by path or by operationId, and prints the status and headers with --include', async () => {
    const listed = await runCli(['api', 'GET', 'transactions', '-q', 'size=1'], { env });
    expect(listed.status, listed.stderr).toBe(0);
    const page = json<{ data: Txn[]; size: number }>(listed);
    expect(page.size).toBe(1);
    expect(page.data).toHaveLength(1);
    const id = (page.data[0] as Txn).id;

    const byOperation = await runCli(['api', 'retrieveTransaction', id], { env });
    expect(byOperation.status, byOperation.stderr).toBe(0);
    expect(json<{ data: Txn }>(byOperation).data.id).toBe(id);

    const included = await runCli(['api', 'GET', `/v1/transactions/${id}`, '-i'], { env });
    expect(included.stdout).toMatch(/^HTTP\/1\.1 200\n/);
    expect(included.stdout).toMatch(/^content-type: application\/json/m);
    expect(JSON.parse(included.stdout.slice(included.stdout.indexOf('\n\n') + 2))).toMatchObject({ data: { id } });

    // Completion offers the document's operationIds after `pos api`, in every shell.
    const offered = (await runCli(['__complete', 'operations'], { env })).stdout.split('\n');
    expect(offered).toEqual(expect.arrayContaining(['createTransaction', 'retrieveTransaction', 'streamRequestLog']));
    for (const shell of ['bash', 'zsh', 'fish']) expect((await runCli(['completion', shell])).stdout, shell).toMatch(/GET POST DELETE \$?\(pos __complete operations/);

    const operations = await runCli(['api', '--list', '--json'], { env });
    expect(json<{ operationId: string }[]>(operations).map((o) => o.operationId)).toEqual(expect.arrayContaining(['createTransaction', 'retrieveTransaction']));
  });

  it('takes the whole body from a file or stdin, and DELETEs', async () => {
    const file = join(dir.path, 'customer.json');
    writeFileSync(file, JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com' }));
    const created = await runCli(['api', 'POST', '/v1/customers', '--data', `@${file}`], { env });
    expect(created.status, created.stderr).toBe(0);
    const customer = json<{ data: { id: string; name: string } }>(created).data;
    expect(customer.name).toBe('Ada Lovelace');

    const fromStdin = await runCli(['api', 'POST', '/v1/customers', '--data', '@-'], { env, stdin: JSON.stringify({ name: 'Grace Hopper' }) });
    expect(json<{ data: { name: string } }>(fromStdin).data.name).toBe('Grace Hopper');

    const deleted = await runCli(['api', 'DELETE', `/v1/customers/${customer.id}`], { env });
    expect(deleted.status, deleted.stderr).toBe(0);
    const gone = await runCli(['api', 'GET', `/v1/customers/${customer.id}`], { env });
    expect(JSON.stringify(json(gone))).toMatch(/deleted|resource_missing/);
  });

  it('prints an error answer as it came and exits 1; a bad invocation is a usage error', async () => {
    const refused = await runCli(['api', 'POST', '/v1/transactions', '-d', 'amount=-5', '-d', 'currency=usd'], { env });
    expect(refused.status).toBe(1);
    expect(json<{ error: { type: string; param: string } }>(refused).error).toMatchObject({ type: 'invalid_request_error', param: 'amount' });
    expect(refused.stderr).toMatch(/HTTP 400/);

    for (const args of [
      ['api', 'GET', '/v1/transactions', '-d', 'amount=1'],
      ['api', 'POST', '/v1/transactions', '-d', 'amount'],
      ['api', 'noSuchOperation'],
      ['api', 'GET'],
      ['api'],
    ]) {
      const bad = await runCli(args, { env });
      expect(bad.status, args.join(' ')).toBe(2);
    }
  });

  it('--paginate follows a numbered list to its end', async () => {
    const shop = await t.merchant('Paged Shop');
    const api = client(t.url, shop.keys.sk_test);
    for (let i = 0; i < 5; i++) expect((await api.post('/v1/transactions', { amount: 100 + i, currency: 'usd' })).status).toBe(201);
    const all = await runCli(['api', 'GET', '/v1/transactions', '--paginate', '-q', 'size=2'], { env: { ...env, POS_API_KEY: shop.keys.sk_test } });
    expect(all.status, all.stderr).toBe(0);
    expect(json<Txn[]>(all).map((x) => x.amount).sort()).toEqual([100, 101, 102, 103, 104]);
  });
});

/** A way to the server that loses the answer to the first request it carries: the request arrives, its answer never does. */
class LosesFirstAnswer {
  #server: Server | undefined;
  #dropped = false;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  async up(): Promise<void> {
    this.#server = createServer((inbound) => {
      const outbound = connect(this.target, '127.0.0.1');
      for (const s of [inbound, outbound]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      inbound.pipe(outbound);
      outbound.on('data', (chunk) => {
        if (!this.#dropped) {
          this.#dropped = true;
          inbound.destroy();
          outbound.destroy();
          return;
        }
        inbound.write(chunk);
      });
      outbound.on('end', () => inbound.end());
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server?.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

describe('retries', () => {
  it('a create whose answer was lost is retried with its Idempotency-Key: one payment', async () => {
    const shop = await t.merchant('Retry Shop');
    const relay = new LosesFirstAnswer(Number(new URL(t.url).port));
    await relay.up();
    try {
      const made = await runCli(['charge', '12.34', '--payment-method', 'pm_card_visa', '--description', 'lost answer', '--json'], { env: { ...env, POS_SERVER_URL: `http://127.0.0.1:${relay.port}`, POS_API_KEY: shop.keys.sk_test } });
      expect(made.status, made.stderr).toBe(0);
      const list = await client(t.url, shop.keys.sk_test).get<{ data: Txn[] }>('/v1/transactions?size=10');
      expect(list.body.data.filter((x) => x.description === 'lost answer')).toHaveLength(1);
      expect(json<{ data: Txn }>(made).data.id).toBe(list.body.data[0]?.id);
    } finally {
      await relay.down();
    }
  });

  it('a POST without an Idempotency-Key is not retried: the error is reported', async () => {
    const shop = await t.merchant('No Retry Shop');
    const relay = new LosesFirstAnswer(Number(new URL(t.url).port));
    await relay.up();
    try {
      const res = await runCli(['api', 'POST', '/v1/transactions', '-d', 'amount=999', '-d', 'currency=usd'], { env: { ...env, POS_SERVER_URL: `http://127.0.0.1:${relay.port}`, POS_API_KEY: shop.keys.sk_test } });
      expect(res.status).toBe(1);
      expect(res.stderr).toMatch(/connect|reach|answer/i);
      // The request did arrive: the payment exists once, and nothing was sent again.
      const list = await client(t.url, shop.keys.sk_test).get<{ data: Txn[] }>('/v1/transactions?size=10');
      expect(list.body.data.filter((x) => x.amount === 999)).toHaveLength(1);
    } finally {
      await relay.down();
    }
  });
});
