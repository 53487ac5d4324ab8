import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit-chain.js';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ProcessorFailure } from '../processor/errors.js';
import type { Scope } from '../accounts/scope.js';
import type { RequestOrigin } from './origin.js';

/** The audit trail's writers on the real database and the in-memory processor. */
describe('the audit trail', () => {
  let d: Domain;
  let paid: string;
  const origin = (requestId: string): RequestOrigin => ({
    requestId,
    idempotencyKey: null,
    key: { id: 'key-desk', type: 'restricted', last4: 'w1x2' },
    operation: 'POST /v1/transactions/{id}/refunds',
    targetId: paid,
  });
  const asRequest = (requestId: string): Scope => ({ ...d.scope, origin: origin(requestId) });

  beforeEach(async () => {
    d = await openDomain({ recoveryRetryScale: 0.001 });
    const created = await d.services.transactions.create(
      d.scope,
      { input: { amount: 1000, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic' }, source: 'api', terminalId: null, response: 'transaction' },
      undefined,
    );
    paid = created.state.transactionId ?? '';
  });
  afterEach(async () => {
    await d.close();
  });

  const entries = async (scope: Scope = d.scope) => (await d.services.audit.list(scope, { page: 1, size: 100 })).data;

  it('writes an idempotent request once, with its answer, and none for its replays or for requests without a key', async () => {
    const first = await d.services.refunds.create(asRequest('req_first'), paid, { amount: 100 }, 'refund-1');
    const replay = await d.services.refunds.create(asRequest('req_again'), paid, { amount: 100 }, 'refund-1');
    expect(replay.replayed).toBe(true);
    const [entry, ...rest] = await entries();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ seq: 1, status: 201, request: { id: 'req_first', idempotency_key: 'refund-1' }, object_id: (first.response.body as { data: { id: string } }).data.id, target_id: paid });
  });

  it('writes a request the recovery pass finished under the request and key that started it, and its events name that request', async () => {
    d.processor.failNext('createRefund', new ProcessorFailure('connection', 'connection reset'));
    await expect(d.services.refunds.create(asRequest('req_cut_short'), paid, { amount: 300 }, 'refund-2')).rejects.toThrow();
    expect(await entries()).toEqual([]);
    d.clock.advance(60_000);
    expect(await d.services.idempotency.recover()).toBe(1);
    const [entry] = await entries();
    expect(entry).toMatchObject({ status: 201, key: { id: 'key-desk', last4: 'w1x2' }, request: { id: 'req_cut_short', idempotency_key: 'refund-2' } });
    const events = (await d.services.events.list(d.scope, { page: 1, size: 100 })).data;
    const byType = (type: string) => events.find((e) => e.type === type)?.request;
    expect(byType('refund.created')).toEqual({ id: 'req_cut_short', idempotency_key: 'refund-2' });
    expect(byType('refund.succeeded')).toEqual({ id: 'req_cut_short', idempotency_key: 'refund-2' });
    expect(byType('payment.partially_refunded')).toEqual({ id: 'req_cut_short', idempotency_key: 'refund-2' });
    // The payment itself was made without an origin: its events name no request.
    expect(byType('payment.succeeded')).toEqual({ id: null, idempotency_key: null });
  });

  it('keeps one chain per merchant and mode, each from #1', async () => {
    await d.services.refunds.create(asRequest('req_1'), paid, { amount: 100 }, undefined);
    await d.services.audit.record({ ...d.scope, mode: 'live' }, { key: null, requestId: 'req_live', idempotencyKey: null, operation: 'POST /v1/customers', targetId: null, objectId: null, status: 400 });
    await d.services.audit.record(d.scope, { key: null, requestId: 'req_2', idempotencyKey: null, operation: 'POST /v1/customers', targetId: null, objectId: null, status: 201 });
    const test = await entries();
    const live = await entries({ ...d.scope, mode: 'live' });
    expect(test.map((e) => e.seq)).toEqual([2, 1]);
    expect(live.map((e) => e.seq)).toEqual([1]);
    expect(verifyAuditChain(test).problem).toBeNull();
    expect(verifyAuditChain(live).problem).toBeNull();
  });

  it('finds the entries that made an object or acted on it, newest first, paged and counted, in its merchant and mode alone', async () => {
    const facts = (requestId: string, objectId: string | null, targetId: string | null) => ({ key: null, requestId, idempotencyKey: null, operation: 'POST /v1/transactions', targetId, objectId, status: 201 });
    await d.services.audit.record(d.scope, facts('req_made', 'obj_1', null));
    await d.services.audit.record(d.scope, facts('req_other', 'obj_2', null));
    await d.services.audit.record(d.scope, facts('req_acted', 're_1', 'obj_1'));
    await d.services.audit.record({ ...d.scope, mode: 'live' }, facts('req_live', 'obj_1', null));
    await d.services.audit.record(d.scope, facts('req_again', 're_2', 'obj_1'));
    const about = (page: number, size: number, filters: { keyId?: string } = {}) => d.services.audit.list(d.scope, { page, size }, { objectId: 'obj_1', ...filters });
    const all = await about(1, 10);
    expect(all.data.map((e) => e.request.id)).toEqual(['req_again', 'req_acted', 'req_made']);
    expect(all.totalCount).toBe(3);
    const second = await about(2, 2);
    expect(second.data.map((e) => e.request.id)).toEqual(['req_made']);
    expect(second.totalCount).toBe(3);
    // Their places in the test-mode chain, the live entry being in a chain of its own.
    expect(all.data.map((e) => e.seq)).toEqual([4, 3, 1]);
    expect((await about(1, 10, { keyId: 'key-nobody' })).data).toEqual([]);
  });
});
