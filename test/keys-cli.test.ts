import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

// @backend-once what the CLI prints, sends and exits with; rolled and revoked keys in the store are key-revocation's and restricted-keys', on both backends.

/** `pos keys …` and `pos agent install-service` against a real server, as the shop owner runs them. */
let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
const dir = tempDir('pos-keys-cli-');

type Key = { id: string; name: string; type: string; secret?: string; last4: string; scopes: string[] | null; status: string };

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Keys Café');
  env = { POS_CONFIG_DIR: join(dir.path, 'config'), POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

describe('pos keys', () => {
  const owner = () => client(t.url, m.keys.sk_test);
  const made = async (preset = 'counter') => (await owner().post<{ data: Key }>('/v1/api-keys', { name: 'Till 1 PC', preset })).body.data;

  it('creates a restricted key, printing it once, as a table or as JSON', async () => {
    const created = await runCli(['keys', 'create', '--name', 'Till 1 PC', '--preset', 'counter', '--json'], { env });
    expect(created.status, created.stderr).toBe(0);
    expect(json<{ data: Key }>(created).data).toMatchObject({ type: 'restricted', name: 'Till 1 PC', secret: expect.stringMatching(/^rk_test_/) });
    const table = await runCli(['keys', 'create', '--name', 'Books', '--scope', 'transactions:read, refunds:read'], { env });
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/scopes +transactions:read, refunds:read/);
    expect(table.stdout).toMatch(/Key \(shown this once; store it now\): rk_test_\w{43}/);
  });

  it('lists keys by their last four characters only', async () => {
    const key = await made();
    const list = await runCli(['keys', 'list'], { env });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(`rk_test_…${key.last4}`);
    expect(list.stdout).toContain(`sk_test_…${m.keys.sk_test.slice(-4)}`);
    expect(list.stdout).not.toContain(String(key.secret));
  });

  it('rolls a key with no grace, then revokes the new one: both refused at once', async () => {
    const key = await made();
    const rolled = await runCli(['keys', 'roll', key.id, '--grace-hours', '0', '--yes', '--json'], { env });
    expect(rolled.status, rolled.stderr).toBe(0);
    const next = json<{ data: Key }>(rolled).data;
    expect(next).toMatchObject({ name: 'Till 1 PC', scopes: key.scopes });
    expect((await client(t.url, key.secret).get('/v1/merchant')).status).toBe(401);
    const revoked = await runCli(['keys', 'revoke', next.id, '--yes'], { env });
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked Till 1 PC \(rk_test_…\w{4}\): it is refused from now on\./);
    expect((await client(t.url, next.secret).get('/v1/merchant')).status).toBe(401);
  });

  it('says what is wrong: no permissions (exit 2), an unknown one (exit 1, naming it)', async () => {
    const none = await runCli(['keys', 'create', '--name', 'x'], { env });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/--scope/);
    const unknown = await runCli(['keys', 'create', '--name', 'x', '--scope', 'refunds:delete'], { env });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/scopes\[0\]/);
  });

  it('refuses a restricted key managing keys (exit 1, permission_error)', async () => {
    const counter = await made();
    const refused = await runCli(['keys', 'list'], { env: { ...env, POS_API_KEY: String(counter.secret) } });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/secret_key_required/);
  });
});

describe('pos agent install-service', () => {
  it('writes a counter key for the shop PC, never the secret key', { timeout: 60_000 }, async () => {
    const unitDir = join(dir.path, 'units');
    const envFile = join(dir.path, 'agent.env');
    // As on a re-install: the file is there already.
    writeFileSync(envFile, '');
    const printed = await runCli(['agent', 'install-service', '--print', '--unit-dir', unitDir, '--secrets-file', envFile], { env });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('POS_API_KEY=rk_test_… (a new counter key, made when the files are written)');
    expect(printed.stdout).not.toContain(m.keys.sk_test);

    const res = await runCli(['agent', 'install-service', '--unit-dir', unitDir, '--secrets-file', envFile], { env });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/uses a new restricted key "pos agent on /);
    const written = readFileSync(envFile, 'utf8');
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const key = /POS_API_KEY=(rk_test_\w+)/.exec(written)?.[1];
    expect(key).toBeDefined();
    expect(written).not.toContain(m.keys.sk_test);
    const api = client(t.url, key);
    expect((await api.get('/v1/terminal/readers')).status).toBe(200);
    expect((await api.get('/v1/api-keys')).status).toBe(403);
    const listed = (await client(t.url, m.keys.sk_test).get<{ data: Key[] }>('/v1/api-keys')).body.data.find((k) => k.last4 === key?.slice(-4));
    expect(listed).toMatchObject({ type: 'restricted', name: expect.stringMatching(/^pos agent on /) });
  });
});
