import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { POS_BIN } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * The standalone simulator killed while requests are in flight: whatever it answered, a restart
 * still has. Its group commit sends an answer only once the commit that made it is durable, so a
 * SIGKILL may lose a request nobody heard back from, never one that was answered.
 */
const dir = tempDir('pos-sim-crash-');
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  dir.cleanup();
});

it('still has every object it answered for after a SIGKILL amid concurrent creates', async () => {
  const port = await freePort();
  const dataDir = join(dir.path, 'sim');
  const env = execFileSync(process.execPath, [POS_BIN, 'simulator', 'env', '--port', String(port), '--data-dir', dataDir], { encoding: 'utf8' });
  const key = /^STRIPE_SECRET_KEY_TEST=(.+)$/m.exec(env)![1]!;
  const url = `http://127.0.0.1:${port}/v1/customers`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' };
  const start = async () => {
    child = spawn(process.execPath, [POS_BIN, 'simulator', '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], { stdio: 'ignore', env: { ...process.env, POS_SIMULATOR_RATE_LIMITS: 'off' } });
    await eventually(async () => ((await fetch(url, { headers }).catch(() => undefined))?.status === 200 ? true : undefined), 20_000);
  };
  await start();
  const answered: string[] = [];
  const running = child!;
  const sent = Array.from({ length: 200 }, (_, i) =>
    fetch(url, { method: 'POST', headers, body: `name=crash-${i}` })
      .then(async (res) => {
        if (res.status !== 200) return;
        answered.push(((await res.json()) as { id: string }).id);
        if (answered.length === 20) running.kill('SIGKILL');
      })
      .catch(() => undefined),
  );
  await Promise.all(sent);
  await new Promise((resolve) => (running.exitCode !== null || running.signalCode !== null ? resolve(undefined) : running.once('exit', resolve)));
  expect(answered.length).toBeGreaterThanOrEqual(20);
  await start();
  const missing: string[] = [];
  for (const id of answered) if ((await fetch(`${url}/${id}`, { headers })).status !== 200) missing.push(id);
  expect(missing).toEqual([]);
  child!.kill('SIGTERM');
}, 60_000);
