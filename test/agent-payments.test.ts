import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { CounterClient, spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client } from './helpers/api.js';
import { eventsOf } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * A real agent process against a real server (in-process, so the test can press the reader's
 * cancel button through the simulator's control API), driven through the local websocket the
 * counter uses.
 */
let t: TestServer;
let m: CreatedMerchant;
let agent: AgentProcess;
let counter: CounterClient;
let reader: string;
const TOKEN = 'counter-token-0123456789';
const agentDir = tempDir('pos-agent-');

beforeAll(async () => {
  // A long authorisation window: the agent sees `processing` on its own polls too.
  t = await startTestServer({}, { simulator: { authorizationDelayMs: 400 } });
  m = await t.merchant('Agent Café');
  agent = await spawnAgent(['--server', t.url, '--api-key', m.keys.sk_test, '--data-dir', agentDir.path, '--simulate', '1', '--heartbeat-ms', '500', '--token', TOKEN, '--log-level', 'info']);
  counter = await CounterClient.connect(agent.url);
  counter.send({ type: 'hello', protocol: 1, token: TOKEN });
  const welcome = await counter.next('welcome');
  expect(welcome).toMatchObject({ agent_id: agent.agentId, mode: 'test' });
  counter.send({ type: 'subscribe', topics: ['readers', 'transactions'] });
  const readers = await counter.next('readers', (msg) => msg.readers.length === 1);
  reader = readers.readers[0]!.processor_terminal_id;
  expect(reader).toMatch(/^tmr_/);
  await eventually(() => (counter.latest(reader)?.status === 'online' ? true : undefined), 10_000);
});

afterAll(async () => {
  counter?.close();
  await agent?.stop();
  await t?.stop();
  agentDir.cleanup();
});

describe('the local websocket', () => {
  it('needs the token in hello when it has one, and validates every message', async () => {
    const stranger = await CounterClient.connect(agent.url);
    stranger.send({ type: 'subscribe', topics: ['readers'] });
    expect((await stranger.next('error')).error.code).toBe('hello_required');
    stranger.send({ type: 'hello', protocol: 1, token: 'wrong-token-wrong-token' });
    expect((await stranger.next('error', (e) => e.error.code === 'invalid_token')).error.type).toBe('authentication_error');
    await eventually(() => (stranger.closed ? true : undefined));

    const from = counter.messages.length;
    for (const junk of ['not json', '{}', '[]', '{"type":"start_payment","request_id":"x","reader":"r","amount":1}', '{"type":"ping","extra":1}', JSON.stringify({ type: 'hello', protocol: 2 })]) counter.send(junk);
    await eventually(() => (counter.messages.slice(from).filter((msg) => msg.type === 'error').length === 6 ? true : undefined));
    counter.send({ type: 'ping' });
    await counter.next('pong', () => true, 5_000, from);
  });
});

describe('a payment through the agent', () => {
  it('starts a payment, follows the simulated tap through every reader state, and pushes the transaction', async () => {
    const from = counter.messages.length;
    const started = await counter.command({ type: 'start_payment', request_id: 'sale-1', reader, amount: 4750, metadata: { order: 'A-1' } });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const txn = (started.data as { transaction: { id: string; status: string } }).transaction;
    expect(txn.status).toBe('pending');
    await counter.next('reader', (msg) => msg.reader.processor_terminal_id === reader && msg.reader.activity === 'waiting_for_card', 10_000, from);

    const tap = await counter.command({ type: 'simulate_tap', request_id: 'tap-1', reader });
    expect(tap.ok, JSON.stringify(tap.error)).toBe(true);
    expect(tap.data).toMatchObject({ status: 'succeeded', transaction_id: txn.id });
    const approved = await counter.next('reader', (msg) => msg.reader.processor_terminal_id === reader && msg.reader.activity === 'approved', 10_000, from);
    expect(approved.reader).toMatchObject({ transaction_id: txn.id, amount: 4750, currency: 'usd' });
    // "processing" only when a look at the reader finds the processor authorising (never on the agent's say-so).
    expect(counter.activities(reader, from).filter((a) => a !== 'processing')).toEqual(['waiting_for_card', 'approved']);

    // The reader comes with its payment, as the server joined them: the counter needs nothing else to know the sale is paid.
    const paid = await counter.next('reader', (msg) => msg.reader.processor_terminal_id === reader && msg.reader.payment?.outcome === 'approved', 10_000, from);
    expect(paid.reader).toMatchObject({ activity: 'approved', payment: { id: txn.id, amount: 4750, currency: 'usd', status: 'succeeded', failure_code: null } });
    const pushed = await counter.next('transaction', (msg) => msg.transaction.id === txn.id && msg.transaction.status === 'succeeded', 10_000, from);
    expect(pushed.transaction).toMatchObject({ amount: 4750, card_last_four: '4242', reader_id: reader });
    // The same request id is the same payment (the agent's create is idempotent).
    const again = await counter.command({ type: 'start_payment', request_id: 'sale-1', reader, amount: 4750, metadata: { order: 'A-1' } });
    expect((again.data as { transaction: { id: string } } | undefined)?.transaction.id ?? (again.error?.code ?? 'error')).toBeTruthy();
  });

  it('reports a declined card', async () => {
    const from = counter.messages.length;
    const started = await counter.command({ type: 'start_payment', request_id: 'sale-2', reader, amount: 1005 });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    await counter.next('reader', (msg) => msg.reader.activity === 'waiting_for_card', 10_000, from);
    const tap = await counter.command({ type: 'simulate_tap', request_id: 'tap-2', reader });
    expect(tap.data).toMatchObject({ status: 'failed' });
    const declined = await counter.next('reader', (msg) => msg.reader.activity === 'declined', 10_000, from);
    expect(declined.reader.failure_code).toBeTruthy();
    const failed = await counter.next('reader', (msg) => msg.reader.payment?.outcome === 'declined', 10_000, from);
    expect(failed.reader.payment).toMatchObject({ status: 'failed', failure_code: expect.any(String) });
    // "processing" is shown only when the processor reports it (never on the agent's say-so); a
    // decline that comes back before the next look at the reader goes straight to "declined".
    expect(counter.activities(reader, from).filter((a) => a !== 'processing')).toEqual(['waiting_for_card', 'declined']);
  });

  it('carries a cart (line_items and tax) to the reader, and refuses one that does not add up before anything is created', async () => {
    const lines = [
      { description: 'Flat white', quantity: 2, amount: 450 },
      { description: 'Almond croissant', quantity: 1, amount: 380 },
    ];
    // The reader is free again once the last payment has left it.
    await eventually(() => (['waiting_for_card', 'processing', 'canceled_on_reader'].includes(counter.latest(reader)?.activity ?? '') ? undefined : true), 10_000);
    const from = counter.messages.length;
    counter.send({ type: 'start_payment', request_id: 'cart-bad', reader, amount: 1300, line_items: lines });
    const refused = await counter.next('error', (e) => e.error.message.includes('line_items'), 5_000, from);
    expect(refused.error).toMatchObject({ code: 'invalid_message' });
    expect(refused.error.message).toContain('must add up to amount');

    const started = await counter.command({ type: 'start_payment', request_id: 'cart-1', reader, amount: 1380, line_items: lines, tax: 100 });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const txnId = (started.data as { transaction: { id: string } }).transaction.id;
    await counter.next('reader', (msg) => msg.reader.activity === 'waiting_for_card' && msg.reader.transaction_id === txnId, 10_000, from);
    const shown = await t.stack.simulator!.control.readerDisplay(reader);
    expect(shown.cart).toMatchObject({ line_items: lines, tax: 100, total: 1380 });
    const api = client(t.url, m.keys.sk_test);
    expect((await api.get<{ data: { cart: unknown } }>(`/v1/transactions/${txnId}`)).body.data.cart).toEqual({ line_items: lines, tax: 100 });
    const cancel = await counter.command({ type: 'cancel_payment', request_id: 'cart-cancel', transaction_id: txnId });
    expect(cancel.ok, JSON.stringify(cancel.error)).toBe(true);
    await counter.next('transaction', (msg) => msg.transaction.id === txnId && msg.transaction.status === 'canceled', 10_000, from);
    // The next test counts the reader's activities from a reader at rest.
    await counter.next('reader', (msg) => msg.reader.processor_terminal_id === reader && msg.reader.activity === 'idle', 15_000, from);
  });

  it('sees a customer cancel on the reader that the API keeps silent, and cancels the payment on command', async () => {
    const from = counter.messages.length;
    const started = await counter.command({ type: 'start_payment', request_id: 'sale-3', reader, amount: 2500 });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const txnId = (started.data as { transaction: { id: string } }).transaction.id;
    await counter.next('reader', (msg) => msg.reader.activity === 'waiting_for_card' && msg.reader.transaction_id === txnId, 10_000, from);

    t.stack.simulator!.control.customerCancel(reader);
    const canceled = await counter.next('reader', (msg) => msg.reader.activity === 'canceled_on_reader', 10_000, from);
    expect(canceled.reader).toMatchObject({ transaction_id: txnId, failure_code: 'customer_canceled' });
    expect(counter.activities(reader, from)).toEqual(['waiting_for_card', 'canceled_on_reader']);

    // The API stays silent (spec §3): the payment is pending and no event but its creation exists.
    const api = client(t.url, m.keys.sk_test);
    expect((await api.get<{ data: { status: string } }>(`/v1/transactions/${txnId}`)).body.data.status).toBe('pending');
    expect((await eventsOf(t.dataDir, txnId)).map((e) => e.type)).toEqual(['payment.created']);

    const cancel = await counter.command({ type: 'cancel_payment', request_id: 'cancel-3', transaction_id: txnId });
    expect(cancel.ok, JSON.stringify(cancel.error)).toBe(true);
    expect(cancel.data).toMatchObject({ status: 'canceled' });
    await counter.next('transaction', (msg) => msg.transaction.id === txnId && msg.transaction.status === 'canceled', 10_000, from);
  });

  it('answers commands it cannot carry out with the API error', async () => {
    const unknown = await counter.command({ type: 'simulate_tap', request_id: 'tap-x', reader: 'tmr_nope' });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'resource_missing' } });
    const idle = await counter.command({ type: 'simulate_tap', request_id: 'tap-y', reader });
    expect(idle.ok).toBe(false);
    expect(idle.error?.code).toBe('reader_idle');
  });

});
