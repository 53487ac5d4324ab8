import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { buildProgram } from '../cli/main.js';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/** One pagination style: every list takes --limit and --all, and --page or --starting-after as its API pages. */
let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
type Obj = { id: string; reference: string; amount: number };

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Pages Shop');
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
  const api = client(t.url, m.keys.sk_test);
  for (const amount of [1100, 1200, 1300, 1400, 1500]) {
    await api.post('/v1/transactions', { amount, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    await api.post('/v1/payment-links', { amount, currency: 'usd' });
  }
});
afterAll(() => t.stop());

function commandsOf(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return command.commands.flatMap((c) => [{ path: [...path, c.name()], command: c }, ...commandsOf(c, [...path, c.name()])]);
}

describe('the flags of every list', () => {
  // The API's lists; `pos config list` (profiles on this machine) and `pos admin … list` (a data dir) page nothing.
  const lists = commandsOf(buildProgram()).filter(({ path }) => path.at(-1) === 'list' && path[0] !== 'config' && path[0] !== 'admin');
  const flags = (c: Command) => c.options.map((o) => o.long);

  it('finds the lists', () => {
    expect(lists.map(({ path }) => path.join(' '))).toEqual(expect.arrayContaining(['transactions list', 'customers list', 'payouts list', 'disputes list', 'links list', 'events list', 'webhooks list', 'keys list', 'readers list', 'locations list', 'audit list']));
  });

  it.each(lists.map(({ path, command }) => [path.join(' '), command] as const))('pos %s takes --all, and --limit with --page or --starting-after where the API pages', (_name, command) => {
    expect(flags(command)).toContain('--all');
    const paged = flags(command).includes('--limit');
    if (paged) expect(flags(command).filter((f) => f === '--page' || f === '--starting-after')).toHaveLength(1);
    else expect(command.options.find((o) => o.long === '--all')?.description).toMatch(/the API answers them all at once/);
  });
});

describe('--all and --limit', () => {
  it('--all with jsonl streams every page, item by item', async () => {
    const r = await runCli(['transactions', 'list', '--all', '--limit', '2', '--format', 'jsonl', '--fields', 'amount'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe([1500, 1400, 1300, 1200, 1100].map((amount) => `{"amount":${amount}}\n`).join(''));
  });

  it('--all with json is one document of every item; a table one table', async () => {
    const all = json<{ data: Obj[] }>(await runCli(['transactions', 'list', '--all', '--limit', '2', '--json'], { env }));
    expect(all.data.map((x) => x.amount)).toEqual([1500, 1400, 1300, 1200, 1100]);
    const table = await runCli(['transactions', 'list', '--all', '--limit', '2', '--fields', 'amount'], { env });
    expect(table.stdout).toBe('AMOUNT\n$15.00\n$14.00\n$13.00\n$12.00\n$11.00\n5 payments\n');
    expect((await runCli(['transactions', 'list', '--all', '--page', '2'], { env })).status).toBe(2);
  });

  it('a cursor list pages with --starting-after, and --all follows the cursor', async () => {
    const first = json<{ data: Obj[]; has_more: boolean }>(await runCli(['links', 'list', '--limit', '2', '--json'], { env }));
    expect(first.data.map((l) => l.amount)).toEqual([1500, 1400]);
    expect(first.has_more).toBe(true);
    const next = json<{ data: Obj[] }>(await runCli(['links', 'list', '--limit', '2', '--starting-after', first.data[1]!.id, '--json'], { env }));
    expect(next.data.map((l) => l.amount)).toEqual([1300, 1200]);
    const table = await runCli(['links', 'list', '--limit', '2'], { env });
    expect(table.stdout).toContain(`more: --starting-after ${first.data[1]!.id}\n`);
    const all = await runCli(['links', 'list', '--all', '--limit', '2', '--format', 'jsonl', '--fields', 'amount'], { env });
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(5);
  });

  it('--size still works as --limit, and a bad --limit is exit 2', async () => {
    expect(json<{ data: Obj[] }>(await runCli(['transactions', 'list', '--size', '3', '--json'], { env })).data).toHaveLength(3);
    const bad = await runCli(['transactions', 'list', '--limit', '101'], { env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('pos: --limit must be a whole number from 1 to 100\n');
  });
});

describe('listen, events and trigger take the program-wide options', () => {
  it.each([['listen'], ['trigger'], ['events', 'list']])('pos %s --help lists --server and --api-key once', async (...args) => {
    const help = (await runCli([...args, '--help'])).stdout;
    expect(help.match(/--server <url>/g)).toHaveLength(1);
    expect(help.match(/--api-key <key>/g)).toHaveLength(1);
  });

  it('events list and trigger use the key of the profile', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'pos-lists-config-'));
    const login = await runCli(['login', '--api-key', m.keys.sk_test, '--server', t.url], { env: { POS_CONFIG_DIR: dir } });
    expect(login.status, login.stderr).toBe(0);
    const triggered = await runCli(['trigger', 'customer.created', '--json'], { env: { POS_CONFIG_DIR: dir } });
    expect(triggered.status, triggered.stderr).toBe(0);
    const events = json<{ data: { type: string }[] }>(await runCli(['events', 'list', '--type', 'customer.created', '--json'], { env: { POS_CONFIG_DIR: dir } }));
    expect(events.data.map((e) => e.type)).toEqual(['customer.created']);
  });
});
