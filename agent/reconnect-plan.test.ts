import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RATE_LIMIT_COOL_OFF_MS, UPSTREAM_CLOSE, UPSTREAM_PROTOCOL_VERSION } from '../shared/agent-upstream.js';
import type { UpstreamSocket, UpstreamTransport } from './ports.js';
import { AGENT_LIMIT_RETRY_MS, BACKOFF_CAP_MS, UpstreamLink, backoffDelay, reconnectPlan } from './upstream.js';

describe('reconnecting after the server closed the link', () => {
  it('backs off as usual after an ordinary drop or a restart, and says nothing more', () => {
    for (const code of [1006, 1012, 1008, 4401]) expect(reconnectPlan(code, 2, () => 0.5)).toEqual({ delayMs: backoffDelay(2, () => 0.5) });
  });

  it('waits out the cool-off after a close for too many messages (or an upgrade refused with 429), and says why', () => {
    for (const attempt of [0, 1, 30]) {
      const plan = reconnectPlan(UPSTREAM_CLOSE.rateLimited, attempt, () => 0);
      expect(plan.delayMs).toBeGreaterThanOrEqual(RATE_LIMIT_COOL_OFF_MS);
      expect(plan.delayMs).toBeLessThanOrEqual(RATE_LIMIT_COOL_OFF_MS + BACKOFF_CAP_MS);
      expect(plan.why).toMatch(/sent more messages than the server allows/);
    }
  });

  it('waits minutes after its key reached its agent limit, and says what to do', () => {
    const plan = reconnectPlan(UPSTREAM_CLOSE.agentLimit, 0, () => 1);
    expect(plan.delayMs).toBeGreaterThanOrEqual(AGENT_LIMIT_RETRY_MS);
    expect(plan.why).toMatch(/already has as many agents as the server allows.*pos keys create --preset counter/);
  });
});

describe('the upstream link after a close for a limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A transport whose every connection the server closes at once with `code`. */
  function closingTransport(code: number): { transport: UpstreamTransport; attempts: () => number } {
    let attempts = 0;
    const transport: UpstreamTransport = {
      connect(): UpstreamSocket {
        attempts += 1;
        let onClose: (code: number, reason: string) => void = () => undefined;
        setTimeout(() => onClose(code, 'limit'), 0);
        return { send: () => undefined, close: () => undefined, onOpen: () => undefined, onMessage: () => undefined, onClose: (l) => (onClose = l) };
      },
    };
    return { transport, attempts: () => attempts };
  }

  it('does not reconnect before the cool-off, and logs why in words', async () => {
    vi.useFakeTimers();
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const { transport, attempts } = closingTransport(UPSTREAM_CLOSE.rateLimited);
    const link = new UpstreamLink(transport, { serverUrl: 'http://127.0.0.1:1', apiKey: 'rk_test_x' }, { hello: () => ({ type: 'hello', protocol: UPSTREAM_PROTOCOL_VERSION, agent_id: '00000000-0000-4000-8000-000000000000', name: 'a', version: '1', heartbeat_ms: 5_000, cursor: null }), message: () => undefined, status: () => undefined }, logger);
    link.start();
    await vi.advanceTimersByTimeAsync(RATE_LIMIT_COOL_OFF_MS - 1);
    expect(attempts()).toBe(1);
    await vi.advanceTimersByTimeAsync(BACKOFF_CAP_MS + 1);
    expect(attempts()).toBe(2);
    const line = lines.find((l) => l.msg.startsWith('upstream connection closed:'));
    expect(line?.level).toBe(50);
    expect(line?.msg).toMatch(/sent more messages than the server allows.*reconnecting in \d+ s/);
    await link.stop(false);
  });
});
