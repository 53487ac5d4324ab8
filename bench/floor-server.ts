import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Stripe from 'stripe';
import { expressServer } from '../shared/express-server.js';

/**
 * The floor of a payment create: what any create costs that makes one processor call through the
 * `stripe` package, as ours must (the create answer carries the PaymentIntent's client_secret).
 * An Express app parses the JSON body and creates a PaymentIntent with the same parameters
 * `pos` sends, against a processor in the same process that does nothing but answer with a stored
 * PaymentIntent (Stripe's published fixture): no database, no keys, no validation, no events.
 * `pos server`'s embedded simulator also shares its process's core, so the two are comparable.
 * With `--served-as-pos` the app is served as `pos server` serves its own (shared/express-server.ts).
 * Prints `{"url": …}` on stdout once listening.
 */
const FIXTURES = new URL('../../simulator/testing/stripe-fixtures.json', import.meta.url);
const fixtures = JSON.parse(readFileSync(FIXTURES, 'utf8')) as { resources: { payment_intent: Record<string, unknown> } };
const cannedIntent = JSON.stringify({ ...fixtures.resources.payment_intent, status: 'requires_payment_method', client_secret: 'pi_floor_secret_floor' });

const processor = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(cannedIntent) });
    res.end(cannedIntent);
  });
});

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

const processorPort = await listen(processor);
const stripe = new Stripe('sk_test_floor', { host: '127.0.0.1', port: processorPort, protocol: 'http', maxNetworkRetries: 2, appInfo: { name: 'pos' } });

let created = 0;
const app = express();
app.use(express.json());
app.post('/', async (req, res) => {
  const amount = (req.body as { amount?: number }).amount ?? 4750;
  created += 1;
  const intent = await stripe.paymentIntents.create(
    {
      amount,
      currency: 'usd',
      allowed_payment_method_types: ['card'],
      capture_method: 'automatic',
      application_fee_amount: Math.round(amount * 0.03),
      transfer_data: { destination: 'acct_floor' },
      metadata: { pos_transaction_id: String(created), pos_reference: `txn_${created}`, pos_merchant_id: 'floor' },
      expand: ['latest_charge'],
    },
    { idempotencyKey: `floor-${process.pid}-${created}` },
  );
  res.status(201).json({ data: { id: String(created), payment_intent_id: intent.id }, client_secret: intent.client_secret });
});
const server = process.argv.includes('--served-as-pos') ? expressServer(app) : createServer(app);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close(() => processor.close(() => process.exit(0)));
  // Keep-alive connections from wrk may linger; the bench only needs the process gone.
  setTimeout(() => process.exit(0), 1_000).unref();
});
