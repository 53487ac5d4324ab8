import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/** `--format`, `--fields` and `--color`: one output layer for every command, against a real server. */
let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
type Obj = { id: string; reference: string; status: string };
const GREEN = '\u001b[32m';
const RED = '\u001b[31m';

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Output Shop');
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
  const api = client(t.url, m.keys.sk_test);
  for (const amount of [1100, 2200, 3300]) await api.post('/v1/transactions', { amount, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
});
afterAll(() => t.stop());

describe('--format and --fields', () => {
  it('jsonl prints one object a line, each with only the fields asked for', async () => {
    const r = await runCli(['transactions', 'list', '--format', 'jsonl', '--fields', 'reference,amount,status'], { env });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.amount)).toEqual([3300, 2200, 1100]);
    for (const line of lines) expect(Object.keys(line)).toEqual(['reference', 'amount', 'status']);
  });

  it('json keeps the envelope and picks from each object; a.b picks a nested field', async () => {
    const list = await runCli(['transactions', 'list', '--format', 'json', '--fields', 'amount'], { env });
    expect(json<{ data: unknown[]; totalCount: number }>(list)).toMatchObject({ data: [{ amount: 3300 }, { amount: 2200 }, { amount: 1100 }], totalCount: 3 });
    const merchant = await runCli(['merchant', '--json', '--fields', 'business_name,nothing_here'], { env });
    expect(json(merchant)).toEqual({ data: { business_name: 'Output Shop' } });
    const created = await runCli(['customers', 'create', '--name', 'Ada', '--metadata', 'tier=gold', '--format', 'json', '--fields', 'name,metadata.tier'], { env });
    expect(json(created)).toEqual({ data: { name: 'Ada', metadata: { tier: 'gold' } } });
  });

  it('a table shows the columns asked for, in that order, and names the ones it has when one is unknown', async () => {
    const r = await runCli(['transactions', 'list', '--fields', 'amount,status'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual(['AMOUNT  STATUS', '$33.00  succeeded']);
    const bad = await runCli(['transactions', 'list', '--fields', 'colour'], { env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^pos: no column colour in this table \(columns: reference, status, amount,/);
  });

  it('refuses a format it does not know (exit 2)', async () => {
    const r = await runCli(['transactions', 'list', '--format', 'yaml'], { env });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Allowed choices are table, json, jsonl/);
  });
});

describe('--color', () => {
  const list = (args: string[], extra: Record<string, string>, stdoutTty = false) =>
    runCli(['transactions', 'list', '--fields', 'reference,status', ...args], { env: { ...env, ...extra }, tty: { stdout: stdoutTty, stderr: stdoutTty } });

  it('auto colours statuses on a terminal only, and never under NO_COLOR', async () => {
    expect((await list([], { NO_COLOR: '' }, true)).stdout).toContain(`${GREEN}succeeded`);
    expect((await list([], { NO_COLOR: '' }, false)).stdout).not.toContain('\u001b[');
    expect((await list([], { NO_COLOR: '1' }, true)).stdout).not.toContain('\u001b[');
  });

  it('CLICOLOR_FORCE colours a pipe; --color always and never win over the environment', async () => {
    expect((await list([], { NO_COLOR: '', CLICOLOR_FORCE: '1' })).stdout).toContain(`${GREEN}succeeded`);
    expect((await list([], { NO_COLOR: '', CLICOLOR_FORCE: '0' })).stdout).not.toContain('\u001b[');
    expect((await list(['--color', 'always'], { NO_COLOR: '1' })).stdout).toContain(`${GREEN}succeeded`);
    expect((await list(['--color', 'never'], { NO_COLOR: '' }, true)).stdout).not.toContain('\u001b[');
  });

  it('keeps the columns lined up: colour codes take no room', async () => {
    const plain = (await list(['--color', 'never'], {})).stdout;
    const coloured = (await list(['--color', 'always'], {})).stdout;
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(plain);
  });

  it('prints errors in red when colour is on', async () => {
    const r = await runCli(['transactions', 'get', 'txn_nothing', '--color', 'always'], { env });
    expect(r.status).toBe(1);
    expect(r.stderr.startsWith(`${RED}pos: `)).toBe(true);
    expect((await runCli(['transactions', 'get', 'txn_nothing'], { env })).stderr.startsWith('pos: ')).toBe(true);
  });
});
