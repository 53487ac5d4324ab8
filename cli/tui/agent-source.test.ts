import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ClientMessageSchema, type AgentMessage, type ClientMessage, type ReaderState } from '../../shared/agent-protocol.js';
import { eventually } from '../../test/helpers/tmp.js';
import { PosClient } from '../api.js';
import { AgentSource } from './agent-source.js';
import type { Action } from './state.js';

/** A fake agent that speaks shared/agent-protocol.ts, validating every message it receives. */
function fakeAgent(port = 0) {
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  const received: ClientMessage[] = [];
  const sockets: WebSocket[] = [];
  const send = (ws: WebSocket, m: AgentMessage) => ws.send(JSON.stringify(m));
  const readerState = (over: Partial<ReaderState> = {}): ReaderState => ({
    id: 'r-1', processor_terminal_id: 'tmr_1', name: 'Till 1', status: 'online', last_seen_at: null, activity: 'idle',
    transaction_id: null, amount: null, currency: null, failure_code: null, updated_at: '2026-11-21T12:00:00.000Z', payment: null, ...over,
  });
  wss.on('connection', (ws) => {
    sockets.push(ws);
    ws.on('message', (raw) => {
      const parsed = ClientMessageSchema.safeParse(JSON.parse(String(raw)));
      if (!parsed.success) {
        send(ws, { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_message', message: 'Invalid message (amount: Too small: expected number to be >=50)' } });
        return;
      }
      const m = parsed.data;
      received.push(m);
      if (m.type === 'hello') send(ws, { type: 'welcome', protocol: 1, agent_id: 'agt_1', mode: 'test', merchant: { id: 'm', business_name: 'Agent Shop' }, upstream: 'connected' });
      if (m.type === 'subscribe') send(ws, { type: 'readers', readers: [readerState()] });
      if (m.type === 'start_payment') {
        send(ws, { type: 'result', request_id: m.request_id, ok: true, data: { transaction_id: 't-1' } });
        send(ws, { type: 'reader', reader: readerState({ activity: 'waiting_for_card', transaction_id: 't-1' }) });
      }
      if (m.type === 'cancel_payment') send(ws, { type: 'result', request_id: m.request_id, ok: false, error: { type: 'invalid_request_error', code: 'authorization_in_progress', message: 'in progress' } });
    });
  });
  const ready = new Promise<number>((resolve) => wss.on('listening', () => resolve((wss.address() as AddressInfo).port)));
  return { wss, received, sockets, ready, close: () => new Promise<void>((r) => { for (const s of sockets) s.terminate(); wss.close(() => r()); }) };
}

const api = new PosClient({ server: 'http://127.0.0.1:9', apiKey: 'sk_test_x', fetch: () => Promise.reject(new Error('no api in this test')) });

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

describe('AgentSource', () => {
  it('says hello, subscribes, and turns agent messages into actions', async () => {
    const agent = fakeAgent();
    const port = await agent.ready;
    const actions: Action[] = [];
    const source = new AgentSource(`ws://127.0.0.1:${port}`, api);
    cleanup.push(async () => source.stop(), agent.close);
    source.start((a) => actions.push(a));
    await eventually(() => actions.some((a) => a.type === 'readers') || undefined, 3000);
    expect(agent.received.slice(0, 2)).toEqual([{ type: 'hello', protocol: 1 }, { type: 'subscribe', topics: ['readers', 'transactions', 'devices'] }]);
    expect(actions).toContainEqual({ type: 'merchant', name: 'Agent Shop', mode: 'test', currency: 'usd' });
    expect(actions).toContainEqual({ type: 'connection', status: 'connected' });

    const reader = (actions.find((a) => a.type === 'readers') as Extract<Action, { type: 'readers' }>).readers[0]!;
    expect(await source.startPayment(reader, 1000, 'usd')).toEqual({ transactionId: 't-1' });
    expect(agent.received[2]).toMatchObject({ type: 'start_payment', reader: 'tmr_1', amount: 1000, currency: 'usd' });
    await eventually(() => actions.some((a) => a.type === 'reader' && a.reader.activity === 'waiting_for_card') || undefined, 3000);
    await expect(source.cancelPayment('t-1', 'canceled_by_staff')).rejects.toMatchObject({ error: { code: 'authorization_in_progress' } });
  });

  it('fails a command the agent refuses at once, instead of waiting out the timeout', async () => {
    const agent = fakeAgent();
    const port = await agent.ready;
    const actions: Action[] = [];
    const source = new AgentSource(`ws://127.0.0.1:${port}`, api);
    cleanup.push(async () => source.stop(), agent.close);
    source.start((a) => actions.push(a));
    await eventually(() => actions.some((a) => a.type === 'readers') || undefined, 3000);
    const reader = (actions.find((a) => a.type === 'readers') as Extract<Action, { type: 'readers' }>).readers[0]!;
    const started = Date.now();
    await expect(source.startPayment(reader, 49, 'usd')).rejects.toMatchObject({ error: { code: 'invalid_message' } });
    expect(Date.now() - started).toBeLessThan(2_000);
    // Answered, so not left on screen as a notice.
    expect(actions.some((a) => a.type === 'notice')).toBe(false);
  });

  it('reports a lost agent and reconnects when it comes back', async () => {
    const agent = fakeAgent();
    const port = await agent.ready;
    const actions: Action[] = [];
    const source = new AgentSource(`ws://127.0.0.1:${port}`, api);
    cleanup.push(async () => source.stop());
    source.start((a) => actions.push(a));
    await eventually(() => actions.some((a) => a.type === 'readers') || undefined, 3000);
    await agent.close();
    await eventually(() => actions.some((a) => a.type === 'connection' && a.status === 'lost') || undefined, 3000);
    await expect(source.simulateTap({ id: 'r-1', processor_terminal_id: 'tmr_1', name: 'Till 1', status: 'online', last_seen_at: null, activity: null, payment: null })).rejects.toThrow(/not connected/);
    const again = fakeAgent(port);
    cleanup.push(again.close);
    await again.ready;
    const before = actions.length;
    await eventually(() => actions.slice(before).some((a) => a.type === 'connection' && a.status === 'connected') || undefined, 8000);
    expect(again.received[0]).toEqual({ type: 'hello', protocol: 1 });
  });
});
