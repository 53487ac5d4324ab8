import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { json, pos } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

// @backend-once the binary as a shell runs it, one smoke test per command family; the commands' effects are cli.test's, on both backends.

/**
 * The real `pos` binary, once per command family, against a server in this process: what the
 * in-process runs of the other CLI tests (runCli) cannot show, that bin/pos.js loads the compiled
 * program, takes its settings from its own environment and profile file, prints on its own stdout
 * and exits with the code the program returned. What each command does is tested in process
 * (cli.test.ts, keys-cli.test.ts, webhooks-cli.test.ts, cli-disputes-payouts.test.ts, …).
 */
let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
const dir = tempDir('pos-cli-binary-');

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Binary Shop');
  env = { POS_CONFIG_DIR: join(dir.path, 'config'), POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

type Data<T = Record<string, unknown>> = { data: T };

describe.concurrent('pos, the binary', () => {
  it('account: login saves the profile that a later command reads', async () => {
    const profile = { POS_CONFIG_DIR: join(dir.path, 'login'), POS_SERVER_URL: t.url };
    const login = await pos(['login', '--api-key', m.keys.sk_test, '--json'], profile);
    expect(login.status, login.stderr).toBe(0);
    expect(json(login)).toMatchObject({ profile: 'default', business_name: 'Binary Shop' });
    const merchant = await pos(['merchant', '--json'], { POS_CONFIG_DIR: profile.POS_CONFIG_DIR });
    expect(json<Data>(merchant).data).toMatchObject({ business_name: 'Binary Shop', is_test: true });
  });

  it('payments: charge prints the API JSON', async () => {
    const r = await pos(['charge', '47.50', '--payment-method', 'pm_card_visa', '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(json<Data>(r).data).toMatchObject({ amount: 4750, status: 'succeeded' });
  });

  it('terminal: locations list as a table', async () => {
    const r = await pos(['locations', 'list'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('(none)\n');
  });

  it('links: create prints the reference and the link', async () => {
    const r = await pos(['links', 'create', '4750c'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pl_\w+ +\$47\.50\nhttps?:\/\/\S+\n$/);
  });

  it('webhooks: list as JSON', async () => {
    const r = await pos(['webhooks', 'list', '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(json<Data<unknown[]>>(r).data).toEqual([]);
  });

  it('report: the day as CSV, written whole', async () => {
    const r = await pos(['report', 'day', '--csv'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^date,currency,scope,name,succeeded_count/);
    expect(r.stdout.endsWith('\n')).toBe(true);
  });

  it('keys: list shows the last four only', async () => {
    const r = await pos(['keys', 'list'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`sk_test_…${m.keys.sk_test.slice(-4)}`);
  });

  it('customers, disputes and payouts: list and balance', async () => {
    for (const args of [['customers', 'list', '--json'], ['disputes', 'list', '--json'], ['balance', '--json']]) {
      const r = await pos(args, env);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(json(r), args.join(' ')).toHaveProperty('data');
    }
  });

  it('events, trigger and listen: the key from the environment', async () => {
    const triggered = await pos(['trigger', 'customer.created', '--json'], env);
    expect(triggered.status, triggered.stderr).toBe(0);
    const events = json<Data<{ type: string }[]>>(await pos(['events', 'list', '--type', 'customer.created', '--json'], env));
    expect(events.data.map((e) => e.type)).toContain('customer.created');
    const secret = await pos(['listen', '--print-secret'], env);
    expect(secret.stdout).toMatch(/^whsec_\S+\n$/);
  });

  it('agent: install-service --print writes the unit to stdout', async () => {
    // --secrets-file, not --env-file: Node 20 takes `--env-file PATH` for itself, even after the script's name.
    const r = await pos(['agent', 'install-service', '--print', '--unit-dir', join(dir.path, 'units'), '--secrets-file', join(dir.path, 'agent.env')], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('ExecStart=');
  });

  it('completion and help print on stdout and exit 0', async () => {
    const bash = await pos(['completion', 'bash']);
    expect(bash.status).toBe(0);
    expect(bash.stdout).toContain('complete -o default -F _pos pos');
    const help = await pos(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: pos /);
  });

  it('exits 2 on a usage error and 1 on an API error, each said in one line on stderr', async () => {
    const unknown = await pos(['frobnicate'], env);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
    const missing = await pos(['transactions', 'get', 'txn_doesnotexist'], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^pos: No such transaction[^\n]* \(resource_missing\)\n$/);
  });
});
