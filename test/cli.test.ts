import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { json, POS_BIN, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveFish } from './helpers/tools.js';

// @backend-once what the CLI prints, sends and exits with; the answers behind it (amounts, refund limits, lists, links, sessions) are the API tests', on both backends.

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let env: Record<string, string>;
/** Terminal tests find "the newest payment": they get a merchant of their own so other tests can run beside them. */
let till: CreatedMerchant;
let tillEnv: Record<string, string>;
const config = tempDir('pos-cli-config-');
/** The fish shell, where it is installed: the completion is loaded in it only there. */
const FISH = haveFish() ? (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'fish')).find((path) => existsSync(path)) : undefined;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 100 }, { simulator: { authorizationDelayMs: 100 } });
  m = await t.merchant('CLI Café');
  till = await t.merchant('Till Shop');
  api = client(t.url, till.keys.sk_test);
  env = { POS_CONFIG_DIR: config.path, POS_SERVER_URL: t.url };
  tillEnv = { ...env, POS_API_KEY: till.keys.sk_test };
  const login = await runCli(['login', '--api-key', m.keys.sk_test, '--json'], { env });
  expect(login.status, login.stderr).toBe(0);
  expect(json(login)).toMatchObject({ profile: 'default', business_name: 'CLI Café', mode: 'test' });
  const location = await runCli(['locations', 'create', '--name', 'Front', '--line1', '1 Market St', '--city', 'SF', '--state', 'CA', '--postal-code', '94105', '--country', 'US', '--json'], { env: tillEnv });
  expect(location.status, location.stderr).toBe(0);
  const reader = await runCli(['readers', 'register', '--name', 'Till 1', '--code', 'simulated-wpe', '--json'], { env: tillEnv });
  expect(reader.status, reader.stderr).toBe(0);
});
afterAll(async () => {
  await t.stop();
  config.cleanup();
});

type Pending = { id: string; reference: string; status: string; reader_id: string | null; amount: number };

/**
 * The newest payment, once it is on the reader: pending, and named by the reader's action. Pending
 * with a reader alone is not enough: the payment may still be being created (a cancel then is 409).
 */
async function onReader(amount: number): Promise<Pending> {
  return eventually(async () => {
    const newest = (await api.get<{ data: Pending[] }>('/v1/transactions?size=1')).body.data[0];
    if (newest?.status !== 'pending' || newest.amount !== amount || !newest.reader_id) return undefined;
    const readers = await api.get<{ data: { action: { status: string; transaction_id: string | null } | null }[] }>('/v1/terminal/readers');
    return readers.body.data.some((r) => r.action?.status === 'in_progress' && r.action.transaction_id === newest.id) ? newest : undefined;
  }, 10_000);
}

/** Waits until the newest terminal payment is on the reader, then taps a card through the API. */
async function tapWhenWaiting(extra: Json = {}): Promise<void> {
  const readers = await api.get<{ data: { processor_terminal_id: string }[] }>('/v1/terminal/readers');
  const reader = readers.body.data[0]!.processor_terminal_id;
  // The newest payment is on the reader once the reader's action names it: a payment made for a
  // reader names it from its creation, before process-payment has reached the reader.
  await eventually(async () => {
    const list = await api.get<{ data: { id: string; status: string; reader_id: string | null }[] }>('/v1/transactions?size=1');
    const newest = list.body.data[0];
    if (newest?.status !== 'pending' || !newest.reader_id) return undefined;
    const now = await api.get<{ data: { processor_terminal_id: string; action: { status: string; transaction_id: string | null } | null }[] }>('/v1/terminal/readers');
    const action = now.body.data.find((r) => r.processor_terminal_id === reader)?.action;
    return action?.status === 'in_progress' && action.transaction_id === newest.id ? true : undefined;
  }, 10_000);
  const res = await api.post('/v1/terminal/simulate-payment', { reader_id: reader, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

describe.concurrent('profiles and configuration', () => {
  it('keeps the key in a profile file readable by its owner only', async () => {
    const file = join(config.path, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ current_profile: 'default', profiles: { default: { server: t.url, api_key: m.keys.sk_test } } });
    const list = await runCli(['config', 'list', '--json'], { env });
    expect(json<{ profiles: Json[] }>(list).profiles[0]).toMatchObject({ profile: 'default', current: '*', api_key: `sk_test_…${m.keys.sk_test.slice(-4)}` });
  });

  it('uses the profile’s server and key, with flags and environment winning', async () => {
    const merchant = await runCli(['merchant', '--json'], { env: { POS_CONFIG_DIR: config.path } });
    expect(merchant.status, merchant.stderr).toBe(0);
    expect(json<{ data: Json }>(merchant).data).toMatchObject({ business_name: 'CLI Café', is_test: true });
    const live = await runCli(['merchant', '--json', '--api-key', m.keys.sk_live], { env });
    expect(json<{ data: Json }>(live).data).toMatchObject({ is_test: false });
  });

  it('gives the webhooks tools (pos events) the profile’s server and key too', async () => {
    const events = await runCli(['events', 'list', '--json'], { env: { POS_CONFIG_DIR: config.path } });
    expect(events.status, events.stderr).toBe(0);
    expect(json<{ data: unknown[] }>(events).data).toEqual(expect.any(Array));
  });

  it('exits 2 without a key and 1 when the server cannot be reached', async () => {
    const empty = tempDir('pos-cli-empty-');
    const noKey = await runCli(['transactions', 'list'], { env: { POS_CONFIG_DIR: empty.path, POS_SERVER_URL: t.url } });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/no API key/);
    const down = await runCli(['merchant'], { env: { ...env, POS_SERVER_URL: 'http://127.0.0.1:9' } });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(down.stderr).toMatch(/\. Is `pos server` or `pos up` running\?\n$/);
    // A profile that does not exist is named, for resource commands and for the event commands alike.
    for (const args of [['transactions', 'list', '--profile', 'nosuch'], ['events', 'list', '--profile', 'nosuch']]) {
      const missing = await runCli(args, { env: { POS_CONFIG_DIR: config.path, POS_SERVER_URL: t.url } });
      expect(missing.status, args.join(' ')).toBe(2);
      expect(missing.stderr).toMatch(/^pos: no profile "nosuch" \(profiles: default\): create it with `pos login --profile nosuch/);
    }
    const badUrl = await runCli(['merchant', '--server', 'ftp://x'], { env });
    expect(badUrl.status).toBe(2);
    empty.cleanup();
  });

  it('exits 2 on unknown commands and bad options', async () => {
    expect((await runCli(['frobnicate'], { env })).status).toBe(2);
    expect((await runCli(['transactions', 'list', '--status', 'nope'], { env })).status).toBe(2);
  });
});

describe.concurrent('online charges and amounts', () => {
  it('charges 47.50 as 4750 cents and prints the API JSON', async () => {
    const r = await runCli(['charge', '47.50', '--payment-method', 'pm_card_visa', '--json'], { env });
    expect(r.status, r.stderr).toBe(0);
    const body = json<{ data: Json; client_secret: string }>(r);
    expect(body.data).toMatchObject({ amount: 4750, currency: 'usd', status: 'succeeded', card_last_four: '4242' });
    expect(body.client_secret).toBeTruthy();
  });

  it.each([
    ['47.5', 4750],
    ['4750c', 4750],
    ['0.5', 50],
  ])('accepts %s', async (text, cents) => {
    const r = await runCli(['charge', text, '--json'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(json<{ data: Json }>(r).data).toMatchObject({ amount: cents, status: 'pending' });
  });

  it.each([
    ['1,000.00', /comma/],
    ['47.505', /more than 2 decimals/],
    ['-5', /positive/],
    ['abc', /not a number/],
  ])('refuses %s with exit 2 before calling the API', async (text, message) => {
    const r = await runCli(['charge', text], { env });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('takes whole numbers only in a zero-decimal currency', async () => {
    expect((await runCli(['charge', '47.5', '--currency', 'jpy'], { env })).stderr).toMatch(/JPY has no decimals/);
    const r = await runCli(['charge', '4750', '--currency', 'jpy', '--json'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(json<{ data: Json }>(r).data).toMatchObject({ amount: 4750, currency: 'jpy' });
  });

  it('prints the API error as "message. hint (code)" in money with exit 1', async () => {
    const r = await runCli(['transactions', 'get', 'txn_doesnotexist'], { env });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^pos: No such transaction[^\n]* \(resource_missing\)\n$/);
    // Below the minimum: said in money, before the API is called.
    const small = await runCli(['charge', '0.10'], { env });
    expect(small.status).toBe(2);
    expect(small.stderr).toBe('pos: Minimum charge is $0.50: "0.10" is $0.10\n');
  });

  it('refunds in part, then refuses more than is left', async () => {
    const paid = json<{ data: { id: string; reference: string } }>(await runCli(['charge', '20.00', '--payment-method', 'pm_card_visa', '--json'], { env })).data;
    const part = await runCli(['refund', paid.reference, '--amount', '5', '--json'], { env });
    expect(part.status, part.stderr).toBe(0);
    expect(json<{ data: Json }>(part).data).toMatchObject({ amount: 500 });
    const tooMuch = await runCli(['refund', paid.id, '--amount', '100.00'], { env });
    expect(tooMuch.status).toBe(1);
    expect(tooMuch.stderr).toMatch(/^pos: A refund of \$100\.00 is more than the \$15\.00 left to refund [^\n]*\. Refund no more than what is left\. \(amount_too_large\)\n$/);
    const badReason = await runCli(['refund', paid.id, '--reason', 'changed_mind'], { env });
    expect(badReason.status).toBe(2);
    expect(badReason.stderr).toMatch(/changed_mind.*duplicate, fraudulent, requested_by_customer/);
    const reason = await runCli(['refund', paid.id, '--amount', '1', '--reason', 'duplicate', '--json'], { env });
    expect(json<{ data: Json }>(reason).data).toMatchObject({ amount: 100, reason: 'duplicate' });
    const got = json<{ data: Json }>(await runCli(['transactions', 'get', paid.reference, '--json'], { env }));
    expect(got.data).toMatchObject({ status: 'partially_refunded', amount_refunded: 600 });
  });

  it('lists payments as a table and as the API’s JSON', async () => {
    const table = await runCli(['transactions', 'list', '--size', '3'], { env });
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^REFERENCE\s+STATUS\s+AMOUNT/);
    const page = json<{ data: Json[]; size: number; totalCount: number }>(await runCli(['txn', 'list', '--size', '2', '--json'], { env }));
    expect(page.size).toBe(2);
    expect(page.data).toHaveLength(2);
    expect((await runCli(['txn', 'list', '--size', '101'], { env })).status).toBe(2);
  });

  it('lists only counter or only online payments with --channel', async () => {
    const shop = await t.merchant('Channel CLI');
    const shopApi = client(t.url, shop.keys.sk_test);
    const shopEnv = { ...env, POS_API_KEY: shop.keys.sk_test };
    const sale = await shopApi.post<{ data: { id: string } }>('/v1/transactions', { payment_method_type: 'cash', amount: 450 });
    for (const amount of [1000, 2000]) expect((await shopApi.post('/v1/transactions', { amount })).status).toBe(201);
    const counter = json<{ data: { id: string; payment_method_type: string }[]; totalCount: number }>(await runCli(['txn', 'list', '--channel', 'counter', '--json'], { env: shopEnv }));
    expect(counter.data.map((x) => x.id)).toEqual([sale.body.data.id]);
    expect(counter.totalCount).toBe(1);
    const online = await runCli(['txn', 'list', '--channel', 'online', '--size', '1'], { env: shopEnv });
    expect(online.status, online.stderr).toBe(0);
    expect(online.stdout).toContain('page 1 of 2 (2 payments)');
    expect(online.stdout).not.toContain('cash');
    expect((await runCli(['txn', 'list', '--channel', 'web'], { env: shopEnv })).status).toBe(2);
  });
});

describe.concurrent('payment links and hosted checkout', () => {
  it('creates, lists, gets and deactivates a payment link', async () => {
    const created = await runCli(['links', 'create', '25.00', '--description', 'Gift card', '--json'], { env });
    expect(created.status, created.stderr).toBe(0);
    const link = json<{ data: { id: string; reference: string; url: string; amount: number; status: string } }>(created).data;
    expect(link).toMatchObject({ amount: 2500, status: 'open' });
    expect(link.reference).toMatch(/^pl_/);
    const human = await runCli(['links', 'create', '4750c'], { env });
    expect(human.stdout).toMatch(/^pl_\w+ +\$47\.50\nhttps?:\/\/\S+\n$/);
    const list = json<{ data: { reference: string }[] }>(await runCli(['links', 'list', '--limit', '5', '--json'], { env }));
    expect(list.data.map((l) => l.reference)).toContain(link.reference);
    expect(json<{ data: { url: string } }>(await runCli(['links', 'get', link.reference, '--json'], { env })).data.url).toBe(link.url);
    const off = await runCli(['links', 'deactivate', link.id, '--yes', '--json'], { env });
    expect(off.status, off.stderr).toBe(0);
    expect(json<{ data: { status: string } }>(off).data.status).toBe('deactivated');
    expect((await runCli(['links', 'get', 'pl_nope'], { env })).status).toBe(1);
  });

  it('creates and retrieves a hosted checkout session', async () => {
    const created = await runCli(['checkout', 'create', '19.99', '--email', 'a@example.com', '--json'], { env });
    expect(created.status, created.stderr).toBe(0);
    const session = json<{ data: { reference: string; url: string; amount: number; status: string } }>(created).data;
    expect(session).toMatchObject({ amount: 1999, status: 'open' });
    const got = await runCli(['checkout', 'get', session.reference], { env });
    expect(got.stdout).toMatch(/cs_\w+\s+open\s+\$19\.99/);
    expect((await runCli(['checkout', 'create', '19.999'], { env })).status).toBe(2);
  });
});

describe('webhook endpoints', () => {
  it('creates one, prints its secret once, lists and deletes it', async () => {
    const hooks = await t.merchant('Hooks Only');
    const hooksEnv = { ...env, POS_API_KEY: hooks.keys.sk_test };
    const created = await runCli(['webhooks', 'create', 'https://example.com/hooks'], { env: hooksEnv });
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/https:\/\/example\.com\/hooks\s+enabled|https:\/\/example\.com\/hooks\s+active/);
    expect(created.stdout).toMatch(/Signing secret \(shown once\): whsec_[A-Za-z0-9+/]+=*/);
    const list = json<{ data: { id: string; url: string }[] }>(await runCli(['webhooks', 'list', '--json'], { env: hooksEnv }));
    expect(list.data.map((e) => e.url)).toEqual(['https://example.com/hooks']);
    const deleted = await runCli(['webhooks', 'delete', list.data[0]!.id, '--yes'], { env: hooksEnv });
    expect(deleted.status, deleted.stderr).toBe(0);
    expect(json<{ data: unknown[] }>(await runCli(['webhooks', 'list', '--json'], { env: hooksEnv })).data).toEqual([]);
  });
});

describe('terminal payments', () => {
  it('lists readers and locations', async () => {
    const readers = json<{ data: Json[] }>(await runCli(['readers', 'list', '--json'], { env: tillEnv }));
    expect(readers.data).toHaveLength(1);
    expect(readers.data[0]).toMatchObject({ name: 'Till 1', status: 'online' });
    const table = await runCli(['readers', 'list'], { env: tillEnv });
    expect(table.stdout).toMatch(/Till 1\s+online/);
    expect(json<{ data: Json[] }>(await runCli(['locations', 'list', '--json'], { env: tillEnv })).data[0]).toMatchObject({ display_name: 'Front' });
  });

  it('pay --wait exits 0 once the card is approved, with the tip', async () => {
    const run = runCli(['pay', '12.00', '--reader', 'Till 1', '--wait', '--json'], { env: tillEnv });
    await tapWhenWaiting({ amount_tip: 200 });
    const r = await run;
    expect(r.status, r.stderr).toBe(0);
    const paid = json<{ data: { reference: string } & Json }>(r).data;
    expect(paid).toMatchObject({ status: 'succeeded', amount: 1400, tip_amount: 200, card_last_four: expect.any(String) });
    const refund = await runCli(['refund', paid.reference, '--yes'], { env: tillEnv });
    expect(refund.status, refund.stderr).toBe(0);
    expect(refund.stdout).toMatch(/\$14\.00 succeeded/);
  });

  it('pay --wait exits 3 when the card is declined', async () => {
    const run = runCli(['pay', '10.05', '--reader', 'Till 1', '--wait'], { env: tillEnv });
    await tapWhenWaiting();
    const r = await run;
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/Declined/);
  });

  it('pay --wait exits 3 when the payment is canceled', async () => {
    const run = runCli(['pay', '9.00', '--reader', 'Till 1', '--wait', '--json'], { env: tillEnv });
    const pending = await onReader(900);
    const cancel = await runCli(['transactions', 'cancel', pending.id, '--json'], { env: tillEnv });
    expect(cancel.status, cancel.stderr).toBe(0);
    expect(json(cancel)).toMatchObject({ data: { status: 'canceled' }, reader_reset: true });
    const r = await run;
    expect(r.status).toBe(3);
    expect(json<{ data: Json }>(r).data).toMatchObject({ status: 'canceled' });
  });

  it('pay --wait: Ctrl-C stops waiting with exit 130 and leaves the payment on the reader', async () => {
    const before = new Set(process.listeners('SIGINT'));
    const run = runCli(['pay', '8.00', '--reader', 'Till 1', '--wait'], { env: tillEnv });
    const pending = await onReader(800);
    // Waiting has begun once `pos pay` listens for Ctrl-C.
    await eventually(async () => (process.listeners('SIGINT').some((l) => !before.has(l)) ? true : undefined), 10_000);
    // Ctrl-C as the process receives it, given only to the handler `pos pay` installed: the test's
    // own process must not be interrupted.
    for (const listener of process.listeners('SIGINT').filter((l) => !before.has(l))) listener('SIGINT');
    const r = await run;
    expect(r.status, r.stderr).toBe(130);
    expect(r.stderr).toContain(`pos: stopped waiting: ${pending.reference} is pending on Till 1 (follow it: pos transactions get ${pending.reference}; cancel it: pos transactions cancel ${pending.reference})`);
    expect((await api.get<{ data: { status: string } }>(`/v1/transactions/${pending.id}`)).body.data.status).toBe('pending');
    expect(process.listeners('SIGINT').filter((l) => !before.has(l))).toEqual([]);
    expect((await runCli(['transactions', 'cancel', pending.id], { env: tillEnv })).status).toBe(0);
  });

  it('simulate tap exits 3 on a decline, 0 on an approval', async () => {
    const declined = await runCli(['pay', '6.00', '--reader', 'Till 1'], { env: tillEnv });
    expect(declined.status, declined.stderr).toBe(0);
    const tap = await runCli(['simulate', 'tap', 'Till 1', '--card', '4000000000009995'], { env: tillEnv });
    expect(tap.status, tap.stderr).toBe(3);
    expect(tap.stdout).toMatch(/^Tapped on Till 1: declined: /);
    expect(tap.stderr).toBe('pos: the card was declined on Till 1\n');
    const approved = await runCli(['pay', '6.50', '--reader', 'Till 1'], { env: tillEnv });
    expect(approved.status, approved.stderr).toBe(0);
    const ok = await runCli(['simulate', 'tap', 'Till 1'], { env: tillEnv });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('Tapped on Till 1: approved\n');
  });

  it('offers reader, location and profile names to completion (pos __complete)', async () => {
    expect((await runCli(['__complete', 'readers'], { env: tillEnv })).stdout).toBe('Till 1\n');
    expect((await runCli(['__complete', 'locations'], { env: tillEnv })).stdout).toBe('Front\n');
    expect((await runCli(['__complete', 'profiles'], { env })).stdout).toBe('default\n');
    // Nothing to offer is no output, not an error in the middle of typing.
    const down = await runCli(['__complete', 'readers'], { env: { ...tillEnv, POS_SERVER_URL: 'http://127.0.0.1:9' } });
    expect(down).toMatchObject({ status: 0, stdout: '' });
    expect((await runCli(['--help'])).stdout).not.toContain('__complete');
  });

  it.skipIf(!FISH)('fish completes reader names after --reader from the server (needs fish)', async () => {
    const bin = join(config.path, 'bin');
    mkdirSync(bin, { recursive: true });
    if (!existsSync(join(bin, 'pos'))) symlinkSync(POS_BIN, join(bin, 'pos'));
    const script = join(config.path, 'pos-names.fish');
    writeFileSync(script, (await runCli(['completion', 'fish'])).stdout);
    const fishEnv = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: config.path, POS_CONFIG_DIR: config.path, ...tillEnv };
    const offered = await new Promise<string>((resolve, reject) =>
      execFile(FISH as string, ['--no-config', '-c', `source ${script}; complete -C 'pos pay 5 --reader '`], { env: fishEnv, encoding: 'utf8' }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    expect(offered.split('\n').map((l) => l.split('\t')[0])).toContain('Till 1');
  });

  it('simulate tap with nothing on the reader is an API error; unknown readers are a usage error', async () => {
    const idle = await runCli(['simulate', 'tap', 'Till 1'], { env: tillEnv });
    expect(idle.status).toBe(1);
    const unknown = await runCli(['pay', '5', '--reader', 'Nope'], { env: tillEnv });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/no reader "Nope".*Till 1/);
  });
});

describe('close-out and completion', () => {
  it('reports the day as JSON and CSV', async () => {
    const r = await runCli(['report', 'day', '--json'], { env: tillEnv });
    expect(r.status, r.stderr).toBe(0);
    const report = json<{ data: { currency: string; total: { succeeded: { count: number }; failed: { count: number }; canceled: { count: number }; refunded: { count: number; amount: number } }; readers: { name: string }[] } }>(r).data;
    expect(report.currency).toBe('usd');
    // The reader tests above: approved 14.00 and 6.50, declined 10.05 and 6.00, canceled 9.00 and 8.00.
    expect(report.total.succeeded.count).toBe(2);
    expect(report.total.failed.count).toBe(2);
    expect(report.total.canceled.count).toBe(2);
    expect(report.total.refunded).toMatchObject({ count: 1, amount: 1400 });
    expect(report.readers.map((x) => x.name)).toContain('Till 1');
    const csv = await runCli(['report', 'day', '--csv'], { env: tillEnv });
    expect(csv.stdout.split('\n')[0]).toMatch(/^date,currency,scope,name,succeeded_count,succeeded_amount/);
    expect(csv.stdout).toMatch(/,reader,Till 1,/);
    expect((await runCli(['report', 'day', '--date', '2026-02-30'], { env: tillEnv })).status).toBe(2);
  });

  it('prints bash and zsh completion covering every group', async () => {
    const bash = await runCli(['completion', 'bash']);
    expect(bash.status).toBe(0);
    expect(bash.stdout).toContain('complete -o default -F _pos pos');
    expect(bash.stdout).toContain('"pos transactions") candidates="list get capture cancel');
    expect(bash.stdout).toContain('"pos admin merchant"');
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^#compdef pos/);
    expect((await runCli(['completion', 'tcsh'])).status).toBe(2);
  });

  it('prints fish completion: each command offers its subcommands and options where the words typed lead', async () => {
    const fish = await runCli(['completion', 'fish']);
    expect(fish.status, fish.stderr).toBe(0);
    expect(fish.stdout).toContain("complete -c pos -n 'test (__pos_path) = \\'pos transactions\\'' -a 'list get capture cancel'");
    expect(fish.stdout).toContain("complete -c pos -n 'test (__pos_path) = \\'pos transactions list\\'' -l all");
    expect(fish.stdout).toContain('complete -c pos -l api-key');
  });

  it.skipIf(!FISH)('fish loads the completion and offers what the words typed lead to (needs fish)', async () => {
    const script = join(config.path, 'pos.fish');
    writeFileSync(script, (await runCli(['completion', 'fish'])).stdout);
    const offered = (line: string) => execFileSync(FISH as string, ['--no-config', '-c', `source ${script}; complete -C '${line}'`], { encoding: 'utf8' }).split('\n').map((l) => l.split('\t')[0]);
    expect(offered('pos transactions ')).toEqual(expect.arrayContaining(['list', 'get', 'capture', 'cancel']));
    expect(offered('pos transactions list --')).toEqual(expect.arrayContaining(['--all', '--limit', '--page']));
    expect(offered('pos ')).toEqual(expect.arrayContaining(['charge', 'pay', 'transactions', 'completion']));
  });
});
