import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startStack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { recordEvent } from '../server/webhooks/outbox.js';
import { loadServerConfig } from '../shared/config.js';
import { systemClock } from '../shared/time.js';
import { phase, type SenderResult } from './webhook-phase.js';

/**
 * pos as the webhook sender: `node dist/bench/webhooks-pos-sender.js <receiver-url> <deliveries> <warmup>`.
 * The real server stack (API, embedded simulator, webhook worker with its default limits) on a
 * temporary SQLite data dir, one endpoint at the receiver, and a backlog written into the outbox in
 * one transaction, as after an outage. A warm-up backlog is delivered first, unmeasured; then the
 * measured one, timed from its commit (writing the events is the API's work, not the worker's)
 * until the receiver has every delivery: fan-out, claiming, signing, sending, recording outcomes.
 * Prints a SenderResult.
 */
const [receiverUrl, deliveriesArg = '', warmupArg = '0'] = process.argv.slice(2);
if (!receiverUrl) throw new Error('usage: webhooks-pos-sender.js <receiver-url> <deliveries> <warmup>');
const deliveries = Number(deliveriesArg);
const warmup = Number(warmupArg);

const dataDir = mkdtempSync(join(tmpdir(), 'pos-bench-hooks-'));
const stack = await startStack(loadServerConfig({ port: 0, dataDir, logLevel: 'silent' }, {}), { logger: pino({ level: 'silent' }) });
try {
  const { store, services } = stack.server;
  const { merchant } = await createMerchant(store, systemClock, { businessName: 'Bench' });
  const scope = { merchantId: merchant.id, mode: 'test' as const };
  await services.webhookEndpoints.create(scope, { url: `${receiverUrl}/hooks` });
  let next = 0;
  const backlog = (count: number) => () =>
    store.transaction(async (trx) => {
      for (let i = 0; i < count; i += 1, next += 1) {
        await recordEvent(trx, scope, 'payment.succeeded', `obj_${next}`, { id: `obj_${next}`, reference: `txn_${next}`, amount: 1000 + next, metadata: {} }, systemClock.now());
      }
    });
  if (warmup > 0) await phase(receiverUrl, warmup, backlog(warmup));
  const rate = await phase(receiverUrl, deliveries, backlog(deliveries));
  const result: SenderResult = { deliveries, deliveriesPerSecond: Math.round(rate) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
}
