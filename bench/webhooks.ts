/**
 * Webhook delivery throughput: deliveries per second from the outbox to one local receiver.
 *
 *   npm run build && node dist/bench/webhooks.js [events=5000]
 *
 * Starts the real server stack on a temporary data dir, registers one endpoint pointing at a
 * node:http receiver in its own process that answers 200 at once, writes the events into the
 * outbox in one transaction (a backlog, as after an outage) and times fan-out, signing, sending
 * and recording until the receiver has every one. Writes bench/results/webhooks-<timestamp>.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startStack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { recordEvent } from '../server/webhooks/outbox.js';
import { loadServerConfig } from '../shared/config.js';
import { systemClock } from '../shared/time.js';

const EVENTS = Number(process.argv[2] ?? 5_000);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pos-bench-hooks-'));
  // The receiver runs in its own process, as a merchant's server would: sharing our event loop
  // would make it wait behind the database work it is meant to measure.
  const receiver = spawn(
    process.execPath,
    [
      '-e',
      `const seen = new Set();
       const server = require('node:http').createServer((req, res) => {
         req.resume();
         req.on('end', () => {
           seen.add(req.headers['webhook-id']);
           res.writeHead(200).end();
           if (seen.size === ${EVENTS}) process.stdout.write('done\\n');
         });
       });
       server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  const lines = (want: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = want.exec(output);
        if (match) resolve(match[0]);
      };
      receiver.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        check();
      });
      receiver.once('exit', () => reject(new Error('receiver exited')));
      check();
    });
  const port = (await lines(/port \d+/)).split(' ')[1];
  const url = `http://127.0.0.1:${port}/hooks`;
  const all = lines(/done/);

  const stack = await startStack(loadServerConfig({ port: 0, dataDir, logLevel: 'silent' }, {}), { logger: pino({ level: 'silent' }) });
  const { store, services } = stack.server;
  try {
    const { merchant } = await createMerchant(store, systemClock, { businessName: 'Bench' });
    const scope = { merchantId: merchant.id, mode: 'test' as const };
    await services.webhookEndpoints.create(scope, { url });
    const started = performance.now();
    await store.transaction(async (trx) => {
      for (let i = 0; i < EVENTS; i += 1) {
        await recordEvent(trx, scope, 'payment.succeeded', `obj_${i}`, { id: `obj_${i}`, reference: `txn_${i}`, amount: 1000 + i, metadata: {} }, systemClock.now());
      }
    });
    const written = performance.now();
    await all;
    const finished = performance.now();
    const seconds = (finished - started) / 1000;
    const result = {
      benchmark: 'webhooks',
      at: new Date().toISOString(),
      node: process.version,
      events: EVENTS,
      write_seconds: Number(((written - started) / 1000).toFixed(3)),
      total_seconds: Number(seconds.toFixed(3)),
      deliveries_per_second: Math.round(EVENTS / seconds),
    };
    const dir = join(process.cwd(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `webhooks-${result.at.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n${file}\n`);
  } finally {
    await stack.close();
    receiver.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
