import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { unpackJson } from '../db/packed-json.js';

describe('disputes on the in-memory processor', () => {
  let d: Domain;
  let paid: string;
  let intent: string;

  beforeEach(async () => {
    d = await openDomain();
    const created = await d.services.transactions.create(
      d.scope,
      {
        input: { amount: 2500, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic', metadata: { order: 'A-17' } },
        source: 'api',
        terminalId: null,
        response: 'transaction',
      },
      undefined,
    );
    paid = created.state.transactionId ?? '';
    intent = (await d.services.transactions.getRow(d.scope, paid)).processor_payment_intent_id ?? '';
  });
  afterEach(async () => {
    await d.close();
  });

  /** The cardholder disputes the payment and the processor's event about it arrives. */
  async function dispute(options: { inquiry?: boolean } = {}) {
    const opened = d.processor.openDispute(intent, options);
    await d.services.disputes.onDisputeEvent(opened.id, 'test', 'charge.dispute.created');
    const [row] = (await d.services.disputes.list(d.scope, { page: 1, size: 10 }, {})).data;
    if (!row) throw new Error('no dispute recorded');
    return row;
  }

  async function events() {
    const rows = await d.store.db.selectFrom('events').select(['type', 'data']).where('type', 'like', 'dispute.%').orderBy('seq').execute();
    return rows.map((r) => ({ type: r.type, data: JSON.parse(unpackJson(r.data)) as Record<string, unknown> }));
  }

  it('records a dispute against its payment, with its events, once however often the news comes', async () => {
    const opened = await dispute();
    expect(opened).toMatchObject({ transaction_id: paid, amount: 2500, currency: 'usd', reason: 'fraudulent', status: 'needs_response', is_test: true, metadata: { order: 'A-17' }, closed_at: null });
    expect(opened.reference).toMatch(/^dp_/);
    expect(opened.evidence_due_by).not.toBeNull();
    expect(opened.funds_withdrawn_at).not.toBeNull();
    const txn = await d.services.transactions.get(d.scope, paid);
    expect(txn).toMatchObject({ status: 'succeeded', dispute_id: opened.id, dispute_status: 'needs_response' });
    expect(txn.disputed_at).not.toBeNull();

    const processorId = (await d.store.db.selectFrom('disputes').select('processor_dispute_id').executeTakeFirstOrThrow()).processor_dispute_id;
    await d.services.disputes.onDisputeEvent(processorId, 'test', 'charge.dispute.funds_withdrawn');
    await d.services.disputes.onDisputeEvent(processorId, 'test', 'charge.dispute.created');
    const recorded = await events();
    expect(recorded.map((e) => e.type)).toEqual(['dispute.created', 'dispute.funds_withdrawn']);
    for (const e of recorded) expect(e.data).toMatchObject({ id: opened.id, is_test: true, metadata: { order: 'A-17' } });
  });

  it('refuses to refund a payment under a formal dispute, but not under an inquiry', async () => {
    await dispute();
    const refused = await d.services.refunds.create(d.scope, paid, {}, undefined);
    expect(refused.response).toMatchObject({ status: 409, body: { error: { code: 'transaction_disputed' } } });
    expect(d.processor.count('createRefund')).toBe(0);
  });

  it('lets an inquiry be refunded: it takes no money', async () => {
    const inquiry = await dispute({ inquiry: true });
    expect(inquiry).toMatchObject({ status: 'warning_needs_response', funds_withdrawn_at: null });
    const refund = await d.services.refunds.create(d.scope, paid, { amount: 500 }, undefined);
    expect(refund.response.status).toBe(201);
  });

  it('stages evidence, then wins with winning_evidence submitted: closed, funds reinstated, refundable again', async () => {
    const opened = await dispute();
    const staged = await d.services.disputes.submitEvidence(d.scope, opened.reference, { product_description: 'Two espressos\nand a croissant' });
    expect(staged).toMatchObject({ status: 'needs_response', evidence: { product_description: 'Two espressos\nand a croissant' }, evidence_submission_count: 0 });
    const won = await d.services.disputes.submitEvidence(d.scope, opened.id, { uncategorized_text: 'winning_evidence', submit: true });
    expect(won).toMatchObject({ status: 'won', evidence_submission_count: 1, evidence: { product_description: 'Two espressos\nand a croissant', uncategorized_text: 'winning_evidence' } });
    expect(won.closed_at).not.toBeNull();
    expect(won.funds_reinstated_at).not.toBeNull();
    expect((await events()).map((e) => [e.type, e.data.status])).toEqual([
      ['dispute.created', 'needs_response'],
      ['dispute.funds_withdrawn', 'needs_response'],
      ['dispute.updated', 'needs_response'],
      ['dispute.closed', 'won'],
      ['dispute.funds_reinstated', 'won'],
    ]);
    expect(await d.services.transactions.get(d.scope, paid)).toMatchObject({ dispute_status: 'won' });
    expect((await d.services.refunds.create(d.scope, paid, { amount: 100 }, undefined)).response.status).toBe(201);

    const late = await d.services.disputes.submitEvidence(d.scope, opened.id, { uncategorized_text: 'more' }).catch((err: unknown) => err);
    expect(late).toMatchObject({ status: 409, code: 'dispute_closed' });
  });

  it('loses with losing_evidence, and refunds stay refused', async () => {
    const opened = await dispute();
    const lost = await d.services.disputes.submitEvidence(d.scope, opened.id, { uncategorized_text: 'losing_evidence', submit: true });
    expect(lost).toMatchObject({ status: 'lost', funds_reinstated_at: null });
    expect((await events()).at(-1)).toMatchObject({ type: 'dispute.closed', data: { status: 'lost' } });
    expect((await d.services.refunds.create(d.scope, paid, {}, undefined)).response.body).toMatchObject({ error: { code: 'transaction_disputed' } });
  });

  it('keeps submitted evidence under review until the network decides', async () => {
    const opened = await dispute();
    const submitted = await d.services.disputes.submitEvidence(d.scope, opened.id, { uncategorized_text: 'Signed receipt attached', submit: true });
    expect(submitted.status).toBe('under_review');
    await expect(d.services.disputes.submitEvidence(d.scope, opened.id, { uncategorized_text: 'again' })).rejects.toMatchObject({ status: 409, code: 'dispute_under_review' });
    await expect(d.services.disputes.accept(d.scope, opened.id)).rejects.toMatchObject({ status: 409, code: 'dispute_under_review' });
  });

  it('accepts a dispute (lost), and accepting again answers the same', async () => {
    const opened = await dispute();
    const accepted = await d.services.disputes.accept(d.scope, opened.id);
    expect(accepted).toMatchObject({ status: 'lost' });
    expect(await d.services.disputes.accept(d.scope, opened.id)).toEqual(accepted);
    expect(d.processor.count('closeDispute')).toBe(1);
  });

  it('never reopens a closed dispute on stale news', async () => {
    const opened = d.processor.openDispute(intent);
    await d.services.disputes.onDisputeEvent(opened.id, 'test', 'charge.dispute.created');
    const row = (await d.services.disputes.list(d.scope, { page: 1, size: 1 }, {})).data[0];
    await d.services.disputes.accept(d.scope, row?.id ?? '');
    await d.services.disputes.onProcessorDispute({ ...opened, status: 'needs_response' }, 'test', 'charge.dispute.updated');
    expect(await d.services.disputes.get(d.scope, row?.id ?? '')).toMatchObject({ status: 'lost' });
  });

  it('records a dispute first heard of once closed with every event in order', async () => {
    const opened = d.processor.openDispute(intent);
    await d.processor.closeDispute({ mode: 'test' }, opened.id, 'k');
    await d.services.disputes.onDisputeEvent(opened.id, 'test', 'charge.dispute.closed');
    expect((await events()).map((e) => e.type)).toEqual(['dispute.created', 'dispute.funds_withdrawn', 'dispute.closed']);
  });

  it('lists by payment and status, in the scope of the key only', async () => {
    const opened = await dispute();
    const txn = await d.services.transactions.get(d.scope, paid);
    for (const ref of [paid, txn.reference]) {
      expect((await d.services.disputes.list(d.scope, { page: 1, size: 10 }, { transactionId: ref })).data.map((x) => x.id)).toEqual([opened.id]);
    }
    expect((await d.services.disputes.list(d.scope, { page: 1, size: 10 }, { transactionId: 'txn_nothing' })).totalCount).toBe(0);
    expect((await d.services.disputes.list(d.scope, { page: 1, size: 10 }, { status: 'won' })).totalCount).toBe(0);
    expect((await d.services.disputes.list(d.scope, { page: 1, size: 10 }, { status: 'needs_response' })).totalCount).toBe(1);
    const live = { ...d.scope, mode: 'live' as const };
    expect((await d.services.disputes.list(live, { page: 1, size: 10 }, {})).totalCount).toBe(0);
    await expect(d.services.disputes.get(live, opened.id)).rejects.toMatchObject({ status: 404, code: 'resource_missing' });
    await expect(d.services.disputes.get({ ...d.scope, merchantId: 'someone-else' }, opened.reference)).rejects.toMatchObject({ status: 404 });
  });

  it('leaves alone a dispute of a payment it does not know', async () => {
    const other = d.processor.openDispute(intent);
    const recorded = await d.services.disputes.onProcessorDispute({ ...other, paymentIntentId: 'pi_unknown' }, 'test');
    expect(recorded).toBeUndefined();
    expect(await d.store.db.selectFrom('disputes').select('id').execute()).toEqual([]);
  });

  it('re-reads open disputes no event told about for a quarter hour (the polling fallback)', async () => {
    const opened = await dispute();
    const processorId = (await d.store.db.selectFrom('disputes').select('processor_dispute_id').executeTakeFirstOrThrow()).processor_dispute_id;
    // Closed at the processor, and the event about it lost.
    await d.processor.closeDispute({ mode: 'test' }, processorId, 'closed-elsewhere');
    expect(await d.services.disputes.pollOpen()).toBe(0);
    d.clock.advance(15 * 60 * 1000 + 1);
    expect(await d.services.disputes.pollOpen()).toBe(1);
    expect(await d.services.disputes.get(d.scope, opened.id)).toMatchObject({ status: 'lost' });
    d.clock.advance(60 * 60 * 1000);
    expect(await d.services.disputes.pollOpen()).toBe(0);
  });
});
