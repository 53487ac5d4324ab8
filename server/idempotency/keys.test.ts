import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { conflict, unavailable } from '../errors.js';
import { IdempotencyService, type Operation } from './keys.js';
import { packJson } from '../db/packed-json.js';

interface CountState {
  n: number;
  fail?: 'transient' | 'refusal';
}

interface Counted {
  n: number;
}

/**
 * The engine alone, with an operation of two steps: `started` commits a step of database work, and
 * `counted` answers. Counters show how often each step ran.
 */
describe('the idempotency engine', () => {
  let d: Domain;
  let engine: IdempotencyService;
  const runs = { started: 0, counted: 0 };
  let failures = 0;
  const operation: Operation<CountState, Counted> = {
    name: 'count',
    steps: {
      started: (state, ctx) => {
        runs.started += 1;
        return ctx.commit(async () => ({ next: 'counted', state: { ...state, n: state.n + 1 } }));
      },
      counted: async (state, ctx) => {
        runs.counted += 1;
        if (state.fail === 'refusal') throw conflict('already_refunded', 'refused');
        if (state.fail === 'transient' && failures > 0) {
          failures -= 1;
          throw new Error('the processor is away');
        }
        return ctx.commit(async () => ({ outcome: { n: state.n } }));
      },
    },
    present: (outcome) => ({ status: 201, body: { n: outcome.n } }),
    giveUp: async () => ({ refusal: unavailable('given up', 'retries_exhausted') }),
  };

  beforeEach(async () => {
    d = await openDomain();
    engine = new IdempotencyService(d.store, d.clock, pino({ level: 'silent' }), 24 * 60 * 60 * 1000, undefined, 0.000_001);
    engine.register(operation);
    runs.started = 0;
    runs.counted = 0;
    failures = 0;
  });
  afterEach(async () => {
    await d.close();
  });

  it('runs each step once per key and replays the first answer, with the state it ended in', async () => {
    const first = await engine.execute(d.scope, operation, 'k', { n: 1 });
    const second = await engine.execute(d.scope, operation, 'k', { n: 41 });
    expect(first).toMatchObject({ replayed: false, state: { n: 2 }, response: { status: 201 } });
    expect(second).toMatchObject({ replayed: true, state: { n: 2 } });
    expect(second.response.body).toEqual({ n: 2 });
    expect(runs).toEqual({ started: 1, counted: 1 });
  });

  it('presents the outcome once and replays that answer, however the retry differs', async () => {
    const first = await engine.execute(d.scope, operation, 'p', { n: 1 });
    expect(first).toMatchObject({ replayed: false, ending: { outcome: { n: 2 } }, response: { status: 201, body: { n: 2 } } });
    const replay = await engine.execute(d.scope, operation, 'p', { n: 7 });
    expect(replay).not.toHaveProperty('ending');
    expect(replay.response.text).toBe('{"n":2}');
  });

  it('replays a stored answer as the very text it holds, packed or kept plain before packing', async () => {
    await engine.execute(d.scope, operation, 'kept', { n: 1 });
    const answer = (text: string) => d.store.db.updateTable('idempotency_keys').set({ response_body: text }).where('key', '=', 'kept').execute();
    const long = JSON.stringify({ n: 2, note: 'Crème brûlée ×2 '.repeat(20), nothing: null });
    await answer(packJson(long));
    expect((await d.store.db.selectFrom('idempotency_keys').select('response_body').where('key', '=', 'kept').executeTakeFirstOrThrow()).response_body).toMatch(/^z2:/);
    expect((await engine.execute(d.scope, operation, 'kept', { n: 1 })).response.text).toBe(long);
    await answer('{"n":2, "written":"before packing"}');
    expect((await engine.execute(d.scope, operation, 'kept', { n: 1 })).response.text).toBe('{"n":2, "written":"before packing"}');
  });

  it('keeps a business refusal as the answer: the request ends in it, a retry replays its body', async () => {
    const refused = await engine.execute(d.scope, operation, 'r', { n: 0, fail: 'refusal' });
    expect(refused).toMatchObject({ replayed: false, ending: { refusal: { status: 409, code: 'already_refunded' } } });
    const replay = await engine.execute(d.scope, operation, 'r', { n: 0 });
    expect(replay.response).toMatchObject({ status: 409, body: { error: { type: 'invalid_request_error', code: 'already_refunded' } } });
    expect(runs.counted).toBe(1);
  });

  it('resumes after a failure from the step that failed, never redoing the one before', async () => {
    failures = 1;
    await expect(engine.execute(d.scope, operation, 't', { n: 0, fail: 'transient' })).rejects.toThrow('the processor is away');
    const resumed = await engine.execute(d.scope, operation, 't', { n: 0, fail: 'transient' });
    expect(resumed).toMatchObject({ replayed: false, state: { n: 1 } });
    expect(runs).toEqual({ started: 1, counted: 2 });
  });

  it('finishes an abandoned request in its recovery pass, and gives it up at the cap', async () => {
    failures = 1;
    await expect(engine.execute(d.scope, operation, 'a', { n: 0, fail: 'transient' })).rejects.toThrow();
    d.clock.advance(1_000);
    expect(await engine.recover()).toBe(1);
    expect((await engine.execute(d.scope, operation, 'a', { n: 0 })).replayed).toBe(true);

    failures = 1_000;
    await expect(engine.execute(d.scope, operation, 'b', { n: 0, fail: 'transient' })).rejects.toThrow();
    for (let i = 0; i < 20; i += 1) {
      d.clock.advance(60 * 60 * 1000);
      await engine.recover();
    }
    const given = await engine.execute(d.scope, operation, 'b', { n: 0 });
    expect(given.response).toMatchObject({ status: 503, body: { error: { type: 'api_error', message: 'given up', code: 'retries_exhausted' } } });
  });

  it('lets one of many racing requests with one key run the operation', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => engine.execute(d.scope, operation, 'race', { n: 0 })));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    // `started` only reads before its commit, so every racer may run it; one commit claims the key.
    expect(runs.counted).toBe(1);
    expect(new Set(results.map((r) => JSON.stringify(r.state)))).toEqual(new Set(['{"n":1}']));
  });

  it('keeps the state a request started with when its first step already answers it', async () => {
    const once: Operation<CountState, Counted> = {
      name: 'once',
      steps: { started: (state, ctx) => ctx.commit(async () => ({ outcome: { n: state.n } })) },
      present: (outcome) => ({ status: 200, body: { n: outcome.n } }),
    };
    engine.register(once);
    expect((await engine.execute(d.scope, once, 'o', { n: 5 })).response.body).toEqual({ n: 5 });
    const replay = await engine.execute(d.scope, once, 'o', { n: 9 });
    expect(replay).toMatchObject({ replayed: true, state: { n: 5 } });
  });

  it("keeps a running request's origin as plain JSON, clears it when it ends, and reads one packed by an older server", async () => {
    const origin = { requestId: 'req_origin', idempotencyKey: 'g', key: { id: 'key_1', type: 'secret' as const, last4: 'abcd' }, operation: 'POST /v1/count', targetId: null };
    failures = 1;
    await expect(engine.execute({ ...d.scope, origin }, operation, 'g', { n: 0, fail: 'transient' })).rejects.toThrow();
    const running = await d.store.db.selectFrom('idempotency_keys').select(['id', 'origin']).where('key', '=', 'g').executeTakeFirstOrThrow();
    expect(JSON.parse(running.origin!)).toMatchObject({ requestId: 'req_origin', operation: 'POST /v1/count' });
    // As a server before this one left it: packed.
    const packed = packJson(running.origin!);
    expect(packed).toMatch(/^z2:/);
    await d.store.db.updateTable('idempotency_keys').set({ origin: packed }).where('id', '=', running.id).execute();
    d.clock.advance(1_000);
    expect(await engine.recover()).toBe(1);
    const finished = await d.store.db.selectFrom('idempotency_keys').select('origin').where('id', '=', running.id).executeTakeFirstOrThrow();
    expect(finished.origin).toBeNull();
    // The recovery pass finished it for the request that started it: the audit entry names that request.
    const entry = await d.store.db.selectFrom('audit_log').select(['request_id', 'operation']).where('idempotency_key', '=', 'g').executeTakeFirstOrThrow();
    expect(entry).toEqual({ request_id: 'req_origin', operation: 'POST /v1/count' });
  });

  it('keeps the answer of a request sent with a key, and only the status of one sent without', async () => {
    const keyed = await engine.execute(d.scope, operation, 'with-key', { n: 1 });
    const keyless = await engine.execute(d.scope, operation, undefined, { n: 1 });
    // Both requests get their whole answer; what the rows keep differs.
    expect(keyed.response.body).toEqual({ n: 2 });
    expect(keyless.response.body).toEqual({ n: 2 });
    const rows = await d.store.db.selectFrom('idempotency_keys').select(['client_supplied', 'recovery_point', 'response_status', 'response_body']).orderBy('client_supplied').execute();
    expect(rows).toEqual([
      { client_supplied: 0, recovery_point: 'finished', response_status: 201, response_body: null },
      { client_supplied: 1, recovery_point: 'finished', response_status: 201, response_body: expect.any(String) },
    ]);
  });

  it('finishes a keyless request that failed half-way from its recovery point, keeping only its status', async () => {
    failures = 1;
    await expect(engine.execute(d.scope, operation, undefined, { n: 40, fail: 'transient' })).rejects.toThrow('the processor is away');
    const running = await d.store.db.selectFrom('idempotency_keys').select(['id', 'recovery_point', 'response_body']).where('client_supplied', '=', 0).executeTakeFirstOrThrow();
    expect(running).toMatchObject({ recovery_point: 'counted', response_body: null });
    d.clock.advance(1_000);
    expect(await engine.recover()).toBe(1);
    // The step before the failure is not run again; the one that failed is, once more.
    expect(runs).toEqual({ started: 1, counted: 2 });
    const finished = await d.store.db.selectFrom('idempotency_keys').select(['recovery_point', 'response_status', 'response_body']).where('id', '=', running.id).executeTakeFirstOrThrow();
    expect(finished).toEqual({ recovery_point: 'finished', response_status: 201, response_body: null });
  });

  it('keeps keys apart by merchant scope and mode', async () => {
    await engine.execute(d.scope, operation, 'shared', { n: 0 });
    const live = await engine.execute({ ...d.scope, mode: 'live' }, operation, 'shared', { n: 10 });
    expect(live).toMatchObject({ replayed: false, state: { n: 11 } });
  });
});
