import http from 'node:http';
import { DEFAULT_PER_ENDPOINT } from '../server/webhooks/worker.js';
import { newSigningSecret, signedHeaders } from '../shared/webhook-signing.js';
import { phase, type SenderResult } from './webhook-phase.js';

/**
 * The floor of webhook delivery: `node dist/bench/webhooks-floor-sender.js <receiver-url> <warmup>`.
 * A bare Node sender posting the bodies pos last delivered to the receiver (fetched from it, so the
 * bodies are the same bytes), each signed at send time with the same Standard Webhooks code pos
 * signs with, over a keep-alive node:http agent as pos's, with as many requests in flight as pos
 * allows one endpoint. No database, no queue, no retries: what any sender pays per delivery.
 * The first `warmup` bodies are sent once unmeasured, then all of them, measured, PASSES times; prints
 * the median as a SenderResult.
 */
const [receiverUrl, warmupArg = '0'] = process.argv.slice(2);
if (!receiverUrl) throw new Error('usage: webhooks-floor-sender.js <receiver-url> <warmup>');
const warmup = Number(warmupArg);

const bodies = (await (await fetch(`${receiverUrl}/_bodies`)).json()) as { id: string; body: string }[];
if (bodies.length === 0) throw new Error('the receiver holds no bodies: run the pos sender first');
const secret = newSigningSecret();
const agent = new http.Agent({ keepAlive: true });
const target = new URL(`${receiverUrl}/hooks`);

function post(id: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(target, {
      method: 'POST',
      agent,
      headers: { ...signedHeaders([secret], id, Date.now(), body), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'pos-webhooks/1' },
    });
    req.on('response', (res) => {
      res.resume();
      if (res.statusCode !== 200) reject(new Error(`receiver answered ${res.statusCode}`));
      else res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts sending `list` with DEFAULT_PER_ENDPOINT requests in flight; resolves when all were answered. */
function sendAll(list: readonly { id: string; body: string }[]): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < list.length) {
      const item = list[next++]!;
      await post(item.id, item.body);
    }
  };
  return Promise.all(Array.from({ length: DEFAULT_PER_ENDPOINT }, lane)).then(() => undefined);
}

const run = async (list: readonly { id: string; body: string }[]): Promise<number> => {
  let sending: Promise<void> = Promise.resolve();
  const rate = await phase(receiverUrl, list.length, async () => {
    sending = sendAll(list);
    // A failed request would leave the receiver waiting for ever: end the run with its error.
    sending.catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
  });
  await sending;
  return rate;
};

/**
 * Measured passes over the bodies, the median reported: one pass takes about a second, short
 * enough for a busy machine's hiccup to move it, and cheap to repeat.
 */
const PASSES = 3;

if (warmup > 0) await run(bodies.slice(0, warmup));
const rates: number[] = [];
for (let i = 0; i < PASSES; i++) rates.push(await run(bodies));
rates.sort((a, b) => a - b);
const result: SenderResult = { deliveries: bodies.length, deliveriesPerSecond: Math.round(rates[Math.floor(PASSES / 2)]!) };
process.stdout.write(`${JSON.stringify(result)}\n`);
agent.destroy();
