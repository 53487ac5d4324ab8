import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from './helpers/api.js';
import { POS_BIN } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { dropSchemaOf, schemaFor, TEST_DATABASE_URL } from './helpers/db.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { CHROMIUM_PATH, haveChromium } from './helpers/tools.js';

/**
 * The README's "Several instances on PostgreSQL" recipe, run as written: its shell block is read from
 * the README itself, so the test fails when the README drifts. Only what must differ on a test
 * machine is replaced: the install line (`pos` is put on PATH from this checkout instead), the
 * ports (free ones) and the database (the suite's, in a schema of its own).
 */
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function recipe(): string[] {
  const section = README.slice(README.indexOf('## Several instances on PostgreSQL'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('the README has no shell block under "Several instances on PostgreSQL"');
  return block.split('\n').filter((line) => line.trim() !== '');
}

const hasChromium = haveChromium();
if (!TEST_DATABASE_URL) console.info('deployment-recipe: skipped, POS_TEST_DATABASE_URL is not set (the PostgreSQL pass of npm test runs it)');
else if (!hasChromium) console.info('deployment-recipe: the checkout page in a browser skipped, chromium is not installed (apt-get install chromium)');

describe.skipIf(!TEST_DATABASE_URL)("the README's several-instances recipe", () => {
  const dir = tempDir('pos-recipe-');
  let shell: ChildProcess | undefined;
  let browser: Browser | undefined;
  let receiver: Receiver | undefined;

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    if (shell?.pid) {
      // The recipe's servers and simulator are jobs of its shell, in its process group.
      try {
        process.kill(-shell.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await dropSchemaOf(dir.path, schemaFor(dir.path));
    dir.cleanup();
  });

  it('gives a working shop: a payment on each API instance, a checkout page paid in a browser, webhooks from the worker', { timeout: 120_000 }, async () => {
    const lines = recipe();
    expect(lines[0]).toMatch(/npm install/);
    const ports = new Map<string, string>();
    for (const port of ['4242', '4243', '4244', '12111']) ports.set(port, String(await freePort()));
    const script = lines
      .slice(1)
      .map((line) => line.replace(/\b(4242|4243|4244|12111)\b/g, (p) => ports.get(p)!).replace('postgres://root@127.0.0.1:5432/pos', TEST_DATABASE_URL!))
      .join('\n');
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    symlinkSync(POS_BIN, join(bin, 'pos'));
    let out = '';
    shell = spawn('bash', ['-e', '-c', `${script}\nwait`], {
      cwd: dir.path,
      detached: true,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir.path, POS_DATABASE_SCHEMA: schemaFor(dir.path) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    shell.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    shell.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const key = await eventually(() => /"sk_test": "(sk_test_\w+)"/.exec(out)?.[1], 60_000, 100).catch(() => {
      throw new Error(`the recipe made no merchant:\n${out}`);
    });
    const [api1, api2, worker] = ['4242', '4243', '4244'].map((p) => `http://127.0.0.1:${ports.get(p)}`) as [string, string, string];
    for (const url of [api1, api2, worker]) {
      await eventually(async () => ((await fetch(`${url}/healthz`).catch(() => undefined))?.ok ? true : undefined), 60_000, 200).catch(() => {
        throw new Error(`${url} never answered /healthz:\n${out}`);
      });
    }

    receiver = await startReceiver();
    const hook = await client(api1, key).post('/v1/webhook-endpoints', { url: receiver.url });
    expect(hook.status).toBe(201);
    const paid = await client(api2, key).post<{ data: { id: string } }>('/v1/transactions', { amount: 1_250, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);

    const session = await client(api1, key).post<{ data: { url: string; transaction_id: string } }>('/v1/checkout/sessions', { amount: 4_750, description: 'Two flat whites', success_url: `${api1}/healthz?paid=1` });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const txns = [paid.body.data.id];
    if (hasChromium) {
      browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
      const page = await browser.newPage();
      const response = await page.goto(session.body.data.url);
      expect(response?.status()).toBe(200);
      expect(await page.textContent('main')).toContain('no real payment is made');
      await page.getByLabel('Card number').fill('4242 4242 4242 4242');
      await page.getByLabel('Expiry (MM/YY)').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByRole('button', { name: /^Pay/ }).click();
      await page.waitForURL(/paid=1/, { timeout: 30_000 });
      txns.push(session.body.data.transaction_id);
    }

    // The processor's events reach an API instance; the worker delivers the shop's webhooks.
    await eventually(
      () => (txns.every((id) => receiver!.received.some((r) => r.type === 'payment.succeeded' && (r.event.data as { id?: string }).id === id)) ? true : undefined),
      30_000,
      200,
    ).catch(() => {
      throw new Error(`no payment.succeeded webhook for ${txns.join(', ')}; received ${receiver!.received.map((r) => r.type).join(', ')}\n${out}`);
    });
    expect(out).not.toMatch(/data_dir/);
  });
});
