import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';
import { haveSystemdAnalyze } from './helpers/tools.js';

/**
 * The systemd units `pos server install-service` and `pos agent install-service` write, checked by
 * systemd's own `systemd-analyze verify` where it is installed (apt-get install systemd).
 */
const analyze = haveSystemdAnalyze();

describe('systemd units', () => {
  const dir = tempDir('pos-units-');
  afterAll(() => dir.cleanup());

  function verify(unitPath: string): void {
    if (!analyze) return;
    // --man=no: the Documentation= link is a file of this install, not a man page to look up.
    execFileSync('systemd-analyze', ['verify', '--man=no', unitPath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  it('pos server install-service writes a unit that needs no user made by hand, and its environment owner-only', async () => {
    const unitDir = join(dir.path, 'server-units');
    const secretsFile = join(dir.path, 'etc', 'server.env');
    const env = {
      DATABASE_URL: 'postgres://pos@db.internal:5432/pos',
      POS_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY_TEST: 'sk_test_abc',
      STRIPE_PUBLISHABLE_KEY_TEST: 'pk_test_abc',
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
      POS_API_KEY: 'sk_test_not_for_the_service',
      HOME: '/root',
    };
    const res = await runCli(['server', 'install-service', '--role', 'worker', '--port', '4300', '--unit-dir', unitDir, '--secrets-file', secretsFile], { env });
    expect(res.status, res.stderr).toBe(0);
    const unit = readFileSync(join(unitDir, 'pos-server.service'), 'utf8');
    expect(unit).toContain('DynamicUser=yes');
    expect(unit).toContain('StateDirectory=pos\n');
    expect(unit).toContain('ProtectHome=read-only');
    expect(unit).toMatch(/ExecStart=\S+ \S+bin\/pos\.js server --data-dir \/var\/lib\/pos --port 4300 --host 127\.0\.0\.1 --role worker\n/);
    expect(unit).toContain(`EnvironmentFile=${secretsFile}`);
    const secrets = readFileSync(secretsFile, 'utf8');
    expect(secrets).toContain('DATABASE_URL=postgres://pos@db.internal:5432/pos\n');
    expect(secrets).toContain('STRIPE_PUBLISHABLE_KEY_TEST=pk_test_abc\n');
    expect(secrets).not.toContain('POS_API_KEY');
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    verify(join(unitDir, 'pos-server.service'));
  });

  it('pos server install-service refuses what the service would refuse at its start', async () => {
    const res = await runCli(['server', 'install-service', '--print', '--role', 'api', '--unit-dir', dir.path], { env: { HOME: '/root' } });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--role api needs PostgreSQL/);
  });

  it('pos agent install-service writes a unit with a state directory systemd makes, readable install, serial devices through dialout', async () => {
    const unitDir = join(dir.path, 'agent-units');
    const secretsFile = join(dir.path, 'agent.env');
    const res = await runCli(['agent', 'install-service', '--server', 'http://127.0.0.1:4242', '--api-key', 'rk_test_0123456789abcdef', '--unit-dir', unitDir, '--secrets-file', secretsFile], { env: { HOME: '/root' } });
    expect(res.status, res.stderr).toBe(0);
    const unit = readFileSync(join(unitDir, 'pos-agent.service'), 'utf8');
    expect(unit).toContain('DynamicUser=yes');
    expect(unit).toContain('SupplementaryGroups=dialout');
    expect(unit).toContain('StateDirectory=pos-agent\n');
    expect(unit).toContain('--data-dir /var/lib/pos-agent');
    expect(unit).not.toContain('ProtectHome=true');
    expect(readFileSync(secretsFile, 'utf8')).toContain('POS_API_KEY=rk_test_0123456789abcdef');
    verify(join(unitDir, 'pos-agent.service'));
  });
});
