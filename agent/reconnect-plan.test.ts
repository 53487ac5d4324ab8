import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_COOL_OFF_MS, UPSTREAM_CLOSE } from '../shared/agent-upstream.js';
import { AGENT_LIMIT_RETRY_MS, BACKOFF_CAP_MS, backoffDelay, reconnectPlan } from './upstream.js';

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
