import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Report } from '../../shared/agent-upstream.js';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ApiError } from '../errors.js';
import { AGENT_LIMITS, type AgentLimits } from './agent-limits.js';
import { AGENT_LIMIT_REACHED, AgentService } from './agents.js';
import { pruneExpiredReports, ReportRetention } from './report-retention.js';

const DAY = 24 * 60 * 60 * 1000;

function reports(from: number, to: number, observedAt = 0): Report[] {
  return Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, reader: { processor_terminal_id: 'tmr_1' }, activity: 'idle', transaction_id: null, failure_code: null, observed_at: observedAt }));
}

describe('agent limits on the database', () => {
  let d: Domain;
  const agents = (limits: Partial<AgentLimits>) => new AgentService(d.store, d.clock, d.cipher, undefined, { ...AGENT_LIMITS, ...limits });
  const hello = (agentId: string) => ({ agent_id: agentId, name: 'Till', version: '1', heartbeat_ms: 5_000, cursor: null });
  const seqs = async (agentId: string) => (await d.store.db.selectFrom('agent_reports').select('seq').where('agent_id', '=', agentId).orderBy('seq').execute()).map((r) => r.seq);
  const agentRows = async () => Number((await d.store.db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  describe('agents per key', () => {
    it('refuses a new agent id past the key’s limit, writes no row for it, and still welcomes the agents it has', async () => {
      const service = agents({ agentsPerKey: 2 });
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      await service.connect(d.scope, hello(a), 'key-1');
      await service.connect(d.scope, hello(b), 'key-1');
      const refused = await service.connect(d.scope, hello(c), 'key-1').catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ status: 409, code: AGENT_LIMIT_REACHED, message: expect.stringMatching(/already has 2 agents heard from in the last 30 days/) });
      expect(await agentRows()).toBe(2);
      // Its own agents reconnect as often as they like; another key has a limit of its own.
      await service.connect(d.scope, hello(a), 'key-1');
      await service.connect(d.scope, hello(c), 'key-2');
      expect(await agentRows()).toBe(3);
    });

    it('counts an agent moving to another key against that key', async () => {
      const service = agents({ agentsPerKey: 1 });
      const [a, b] = [randomUUID(), randomUUID()];
      await service.connect(d.scope, hello(a), 'key-1');
      await service.connect(d.scope, hello(b), 'key-2');
      await expect(service.connect(d.scope, hello(a), 'key-2')).rejects.toMatchObject({ code: AGENT_LIMIT_REACHED });
      expect((await d.store.db.selectFrom('agents').select('api_key_id').where('id', '=', a).executeTakeFirstOrThrow()).api_key_id).toBe('key-1');
      // Moved to a third key, it frees its place on the first.
      await service.connect(d.scope, hello(a), 'key-3');
      await service.connect(d.scope, hello(b), 'key-1');
      expect((await d.store.db.selectFrom('agents').select('api_key_id').where('id', '=', b).executeTakeFirstOrThrow()).api_key_id).toBe('key-1');
    });

    it('stops counting an agent not heard from for the idle period', async () => {
      const service = agents({ agentsPerKey: 1 });
      const [a, b] = [randomUUID(), randomUUID()];
      await service.connect(d.scope, hello(a), 'key-1');
      d.clock.advance(AGENT_LIMITS.agentIdleMs - 1);
      await expect(service.connect(d.scope, hello(b), 'key-1')).rejects.toMatchObject({ code: AGENT_LIMIT_REACHED });
      // A heartbeat is hearing from it.
      await service.heartbeat(d.scope, a, 5_000, []);
      d.clock.advance(AGENT_LIMITS.agentIdleMs - 1);
      await expect(service.connect(d.scope, hello(b), 'key-1')).rejects.toMatchObject({ code: AGENT_LIMIT_REACHED });
      d.clock.advance(2);
      await service.connect(d.scope, hello(b), 'key-1');
      expect(await agentRows()).toBe(2);
    });
  });

  describe('reports kept per agent', () => {
    it('keeps the reports of the agent’s newest sequence numbers and deletes the rest as it stores', async () => {
      const service = agents({ reportsKept: 5 });
      const agent = randomUUID();
      await service.connect(d.scope, hello(agent), 'key-1');
      expect(await service.storeReports(d.scope, agent, reports(1, 4))).toBe(4);
      expect(await seqs(agent)).toEqual([1, 2, 3, 4]);
      expect(await service.storeReports(d.scope, agent, reports(5, 9))).toBe(9);
      expect(await seqs(agent)).toEqual([5, 6, 7, 8, 9]);
      // A replay of what is stored changes nothing; a jump in seq leaves only what is within reach.
      expect(await service.storeReports(d.scope, agent, reports(3, 9))).toBe(9);
      expect(await seqs(agent)).toEqual([5, 6, 7, 8, 9]);
      expect(await service.storeReports(d.scope, agent, reports(12, 13))).toBe(13);
      expect(await seqs(agent)).toEqual([9, 12, 13]);
    });

    it('never holds more than the cap, even after a jump left more than one message’s worth behind', async () => {
      const service = agents({ reportsKept: 2_000 });
      const agent = randomUUID();
      await service.connect(d.scope, hello(agent), 'key-1');
      for (let from = 1; from <= 2_000; from += 500) await service.storeReports(d.scope, agent, reports(from, from + 499));
      expect((await seqs(agent)).length).toBe(2_000);
      // A jump puts all 2,000 out of reach and a full message comes in: one message deletes at
      // most 1,000, which still leaves no more than the cap.
      await service.storeReports(d.scope, agent, reports(10_001, 10_500));
      const after = await seqs(agent);
      expect(after.length).toBe(1_500);
      expect(after[0]).toBe(1_001);
      await service.storeReports(d.scope, agent, reports(10_501, 10_501));
      expect((await seqs(agent))[0]).toBe(10_001);
    });
  });

  describe('report retention', () => {
    it('prunes only reports past the period, counted from when the server received them', async () => {
      const service = agents({});
      const agent = randomUUID();
      await service.connect(d.scope, hello(agent), 'key-1');
      const start = d.clock.now();
      // The agent's own clock says nothing about age: these claim to be ancient.
      await service.storeReports(d.scope, agent, reports(1, 3, 0));
      d.clock.advance(10 * DAY);
      await service.storeReports(d.scope, agent, reports(4, 6, 0));
      expect(await service.oldestReportAt()).toBe(start);

      d.clock.ms = start + 30 * DAY;
      expect(await pruneExpiredReports(service, d.clock)).toBe(0);
      expect(await seqs(agent)).toEqual([1, 2, 3, 4, 5, 6]);
      d.clock.ms = start + 30 * DAY + 1;
      expect(await pruneExpiredReports(service, d.clock)).toBe(3);
      expect(await seqs(agent)).toEqual([4, 5, 6]);
      expect(await service.oldestReportAt()).toBe(start + 10 * DAY);
      d.clock.ms = start + 40 * DAY;
      expect(await pruneExpiredReports(service, d.clock)).toBe(0);
      d.clock.ms = start + 40 * DAY + 1;
      expect(await pruneExpiredReports(service, d.clock)).toBe(3);
      expect(await service.oldestReportAt()).toBeUndefined();
    });

    it('prunes in bounded batches, oldest first, one transaction each', async () => {
      const service = agents({ pruneBatch: 2 });
      const [a, b] = [randomUUID(), randomUUID()];
      await service.connect(d.scope, hello(a), 'key-1');
      await service.connect(d.scope, hello(b), 'key-1');
      await service.storeReports(d.scope, a, reports(1, 3));
      d.clock.advance(1);
      await service.storeReports(d.scope, b, reports(1, 2));
      d.clock.advance(1);
      await service.storeReports(d.scope, a, reports(4, 4));
      const before = d.clock.now();
      expect(await service.pruneReports(before, 2)).toBe(2);
      expect(await seqs(a)).toEqual([3, 4]);
      expect(await service.pruneReports(before, 2)).toBe(2);
      expect(await seqs(a)).toEqual([4]);
      expect(await seqs(b)).toEqual([2]);
      d.clock.advance(AGENT_LIMITS.reportRetentionMs + 1);
      expect(await pruneExpiredReports(service, d.clock)).toBe(2);
      expect(await seqs(a)).toEqual([]);
      expect(await seqs(b)).toEqual([]);
    });

    it('prunes by itself, at start, what fell due while no server ran', async () => {
      const service = agents({});
      const agent = randomUUID();
      await service.connect(d.scope, hello(agent), 'key-1');
      await service.storeReports(d.scope, agent, reports(1, 2));
      d.clock.advance(AGENT_LIMITS.reportRetentionMs + 1);
      const retention = new ReportRetention(service, d.store.notifications, d.clock, pino({ level: 'silent' }));
      retention.start();
      try {
        for (let i = 0; i < 200 && (await seqs(agent)).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
        expect(await seqs(agent)).toEqual([]);
      } finally {
        await retention.stop();
      }
    });
  });
});
