import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ApiError } from '../errors.js';
import { AGENT_LIMITS, type AgentLimits } from './agent-limits.js';
import { AGENT_LIMIT_REACHED, AgentService } from './agents.js';

describe('agent limits on the database', () => {
  let d: Domain;
  const agents = (limits: Partial<AgentLimits>) => new AgentService(d.store, d.clock, d.cipher, undefined, { ...AGENT_LIMITS, ...limits });
  const hello = (agentId: string) => ({ agent_id: agentId, name: 'Till', version: '1', heartbeat_ms: 5_000, cursor: null });
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
});
