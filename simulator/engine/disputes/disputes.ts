import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, mergeMetadata } from '../shapes.js';
import { DISPUTE_FEE, stripeFee } from '../payments/fees.js';
import { DAY_MS, type Ledger } from '../ledger.js';
import type { Transfers } from '../connect/transfers.js';
import { disputeBehaviour } from '../payments/instruments.js';
import type { PaymentMethodInternal } from '../payments/paymentMethods.js';
import type { ChargeRow } from '../payments/types.js';
import { type DisputeInternal, type DisputeOpenPayload, type DisputeRow, type DisputeUpdateInput, EVIDENCE_FIELDS, type EvidenceField } from './types.js';

/**
 * Disputes, opened on the charges of Stripe's dispute test cards a short delay after capture:
 *
 *   chargeback: needs_response → (evidence submitted) under_review → won | lost; close → lost
 *   inquiry:    warning_needs_response → warning_under_review → warning_closed (won) | lost; close → warning_closed
 *
 * A chargeback withdraws the disputed amount and Stripe's dispute fee from the balance the charge
 * was made on; winning reinstates both. On a destination charge that balance is the platform's, and
 * the simulator then does what Stripe's Connect docs tell a platform to do: it reverses the
 * transfer and debits the dispute fee from the connected account, and gives both back if the
 * dispute is won. `uncategorized_text` `winning_evidence` / `losing_evidence` decide the outcome
 * as in Stripe's test mode; any other evidence stays under review.
 */

interface DecisionPayload {
  dispute: string;
  outcome: 'won' | 'lost';
  apiVersion: string;
}


/**
 * Card networks give 7 to 21 days to respond; the simulator gives the shortest, the deadline a
 * merchant must be ready for. It is informational: no dispute is ever closed for missing it.
 */
const EVIDENCE_WINDOW_DAYS = 7;

const AWAITING_RESPONSE = new Set<string>(['needs_response', 'warning_needs_response']);
const UNDER_REVIEW = new Set<string>(['under_review', 'warning_under_review']);

function emptyEvidence(): Stripe.Dispute.Evidence {
  const evidence = Object.fromEntries(EVIDENCE_FIELDS.map((field) => [field, null])) as Record<EvidenceField, null>;
  return { ...evidence, enhanced_evidence: {} } as Stripe.Dispute.Evidence;
}

/** Stripe's deadlines end at 23:59:59 UTC of the due day. */
function dueBy(nowMs: number): number {
  const dueDayStart = Math.floor((nowMs + EVIDENCE_WINDOW_DAYS * DAY_MS) / DAY_MS) * DAY_MS;
  return unixSeconds(dueDayStart + DAY_MS) - 1;
}

export class Disputes {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
    private readonly transfers: Transfers,
  ) {}

  private get(scope: Scope, id: string): DisputeRow {
    return getScoped<Stripe.Dispute, DisputeInternal>(this.kernel, 'dispute', scope, id, 'dispute', 'dispute');
  }

  /** Timer: the cardholder's bank opens the dispute on a captured charge. */
  open(raw: unknown): void {
    const payload = raw as DisputeOpenPayload;
    const chargeRow = getAny<Stripe.Charge, Record<string, never>>(this.kernel, 'charge', payload.charge, 'charge');
    const charge = chargeRow.body;
    // A charge refunded in full before the dispute can no longer be disputed (Stripe's dispute FAQ).
    const amount = charge.amount_captured - charge.amount_refunded;
    if (charge.disputed || charge.status !== 'succeeded' || amount <= 0) return;
    const cardNumber = this.kernel.store.find<unknown, PaymentMethodInternal>(String(charge.payment_method))?.internal.cardNumber ?? '';
    const behaviour = disputeBehaviour(cardNumber);
    if (!behaviour) return;
    const scope: Scope = { livemode: chargeRow.livemode, account: chargeRow.account };
    const origin = systemOrigin(scope, payload.apiVersion);
    const nowMs = this.kernel.now();
    const brand = charge.payment_method_details?.card?.brand ?? 'visa';
    const body: Stripe.Dispute = {
      id: newId('dp'),
      object: 'dispute',
      amount,
      balance_transactions: [],
      charge: charge.id,
      created: unixSeconds(nowMs),
      currency: charge.currency,
      enhanced_eligibility_types: [],
      evidence: emptyEvidence(),
      evidence_details: { due_by: dueBy(nowMs), enhanced_eligibility: {}, has_evidence: false, past_due: false, submission_count: 0, submission_method: 'not_submitted' },
      intended_submission_method: null,
      // An inquiry has withdrawn nothing yet, so the charge can still be refunded; a chargeback cannot.
      is_charge_refundable: behaviour.inquiry,
      livemode: chargeRow.livemode,
      metadata: {},
      network_reason_code: behaviour.networkReasonCode,
      payment_intent: typeof charge.payment_intent === 'string' ? charge.payment_intent : null,
      payment_method_details: {
        card: { brand, case_type: behaviour.inquiry ? 'inquiry' : 'chargeback', network: brand, network_reason_code: behaviour.networkReasonCode },
        type: 'card',
      },
      reason: behaviour.reason,
      status: behaviour.inquiry ? 'warning_needs_response' : 'needs_response',
    };
    const row = this.kernel.store.insert<Stripe.Dispute, DisputeInternal>('dispute', scope, body, { inquiry: behaviour.inquiry, recovered: null, decisionTimerId: null });
    charge.disputed = true;
    this.kernel.store.save(chargeRow);
    this.kernel.events.emit(origin, 'charge.dispute.created', row.body);
    if (!behaviour.inquiry) this.withdraw(origin, row, chargeRow);
  }

  /** The disputed amount and the dispute fee leave the charge's balance (and, on Connect, the merchant's). */
  private withdraw(origin: Origin, row: DisputeRow, chargeRow: ChargeRow): void {
    const dispute = row.body;
    const charge = chargeRow.body;
    const scope: Scope = { livemode: row.livemode, account: row.account };
    const txn = this.ledger.record(origin, scope, {
      type: 'adjustment',
      amount: -dispute.amount,
      currency: dispute.currency,
      source: dispute.id,
      description: `Chargeback withdrawal for ${charge.id}`,
      reportingCategory: 'dispute',
      fees: [stripeFee(DISPUTE_FEE, dispute.currency, 'Dispute fee')],
      availability: 'available',
    });
    dispute.balance_transactions = [...dispute.balance_transactions, txn];
    dispute.is_charge_refundable = false;
    if (typeof charge.transfer === 'string') {
      const transferRow = this.transfers.get(row.livemode, charge.transfer);
      const account = String(transferRow.body.destination);
      const reversal = this.transfers.reverse(origin, transferRow, dispute.amount, null);
      // The fee, as the account debit a platform makes to pass it on (a transfer back to the platform).
      this.ledger.record(origin, { livemode: row.livemode, account }, {
        type: 'transfer',
        amount: -DISPUTE_FEE,
        currency: dispute.currency,
        source: dispute.id,
        description: `Dispute fee for ${dispute.id}`,
        reportingCategory: 'transfer',
        availability: 'available',
      });
      this.ledger.record(origin, { livemode: row.livemode, account: null }, {
        type: 'payment',
        amount: DISPUTE_FEE,
        currency: dispute.currency,
        source: dispute.id,
        description: `Dispute fee for ${dispute.id} from ${account}`,
        reportingCategory: 'charge',
        availability: 'available',
      });
      row.internal.recovered = { account, amount: reversal.amount, fee: DISPUTE_FEE };
    }
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.dispute.funds_withdrawn', dispute);
  }

  /** A won chargeback: amount and fee back on the charge's balance, and to the merchant what it gave. */
  private reinstate(origin: Origin, row: DisputeRow): void {
    const dispute = row.body;
    const scope: Scope = { livemode: row.livemode, account: row.account };
    const txn = this.ledger.record(origin, scope, {
      type: 'adjustment',
      amount: dispute.amount,
      currency: dispute.currency,
      source: dispute.id,
      description: `Chargeback reversal for ${String(dispute.charge)}`,
      reportingCategory: 'dispute_reversal',
      fees: [stripeFee(-DISPUTE_FEE, dispute.currency, 'Dispute fee refund')],
      availability: 'available',
    });
    dispute.balance_transactions = [...dispute.balance_transactions, txn];
    this.ledger.creditedNow(origin, scope, txn);
    const recovered = row.internal.recovered;
    if (recovered) {
      this.transfers.create(origin, row.livemode, {
        amount: recovered.amount + recovered.fee,
        currency: dispute.currency,
        destination: recovered.account,
        sourceTransaction: String(dispute.charge),
        transferGroup: null,
        sourceType: 'card',
        description: `Dispute ${dispute.id} won`,
        availability: 'available',
      });
    }
  }

  retrieve(scope: Scope, id: string): Stripe.Dispute {
    return this.get(scope, id).body;
  }

  list(
    scope: Scope,
    filters: { charge?: string | undefined; payment_intent?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.Dispute> {
    const result = this.kernel.store.list<Stripe.Dispute, DisputeInternal>('dispute', scope, filters, page);
    return list('/v1/disputes', result.data.map((row) => row.body), result.hasMore);
  }

  update(origin: Origin, id: string, input: DisputeUpdateInput): Stripe.Dispute {
    const row = this.get(origin.scope, id);
    const dispute = row.body;
    const previous: Record<string, unknown> = {};
    if (input.evidence !== undefined) {
      if (UNDER_REVIEW.has(dispute.status)) {
        throw invalidRequest('Evidence for this dispute has already been submitted and can no longer be changed.', 'evidence');
      }
      if (!AWAITING_RESPONSE.has(dispute.status)) {
        throw invalidRequest(`This dispute is already closed (status ${dispute.status}); its evidence can no longer be changed.`, 'evidence');
      }
      previous.evidence = structuredClone(dispute.evidence);
      const evidence = dispute.evidence as unknown as Record<string, string | null>;
      for (const [field, value] of Object.entries(input.evidence)) evidence[field] = value === '' ? null : value;
      dispute.evidence_details.has_evidence = EVIDENCE_FIELDS.some((field) => evidence[field] !== null);
    }
    if (input.metadata !== undefined) {
      previous.metadata = dispute.metadata;
      dispute.metadata = mergeMetadata(dispute.metadata, input.metadata);
    }
    const submit = input.submit ?? input.evidence !== undefined;
    if (submit) this.submit(origin, row, previous, input.submit === true);
    this.kernel.store.save(row);
    if (Object.keys(previous).length > 0) this.kernel.events.emit(origin, 'charge.dispute.updated', dispute, previous);
    return dispute;
  }

  private submit(origin: Origin, row: DisputeRow, previous: Record<string, unknown>, explicit: boolean): void {
    const dispute = row.body;
    if (!AWAITING_RESPONSE.has(dispute.status)) {
      if (explicit) throw invalidRequest(`This dispute is not awaiting a response (status ${dispute.status}).`, 'submit');
      return;
    }
    if (!dispute.evidence_details.has_evidence) throw invalidRequest('There is no evidence to submit: provide at least one evidence field.', 'evidence');
    previous.status = dispute.status;
    previous.evidence_details = structuredClone(dispute.evidence_details);
    dispute.status = row.internal.inquiry ? 'warning_under_review' : 'under_review';
    dispute.evidence_details.submission_count += 1;
    dispute.evidence_details.submission_method = 'manual';
    const text = dispute.evidence.uncategorized_text;
    const outcome = text === 'winning_evidence' ? 'won' : text === 'losing_evidence' ? 'lost' : null;
    if (outcome) {
      const payload: DecisionPayload = { dispute: dispute.id, outcome, apiVersion: origin.apiVersion };
      row.internal.decisionTimerId = this.kernel.timers.schedule('dispute_decision', this.kernel.now() + this.kernel.config.disputeDelayMs, payload);
    }
  }

  /** Accepting the dispute: a chargeback is lost, an inquiry closes without one. */
  close(origin: Origin, id: string): Stripe.Dispute {
    const row = this.get(origin.scope, id);
    const dispute = row.body;
    if (!AWAITING_RESPONSE.has(dispute.status)) {
      throw invalidRequest(`This dispute cannot be closed: its status is ${dispute.status}. Only a dispute awaiting a response (needs_response or warning_needs_response) can be closed.`);
    }
    dispute.status = row.internal.inquiry ? 'warning_closed' : 'lost';
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.dispute.closed', dispute);
    return dispute;
  }

  /** Timer: the bank decides a dispute whose evidence named the outcome. */
  decide(raw: unknown): void {
    const payload = raw as DecisionPayload;
    const row = getAny<Stripe.Dispute, DisputeInternal>(this.kernel, 'dispute', payload.dispute, 'dispute');
    const dispute = row.body;
    if (!UNDER_REVIEW.has(dispute.status)) return;
    row.internal.decisionTimerId = null;
    const origin = systemOrigin({ livemode: row.livemode, account: row.account }, payload.apiVersion);
    if (payload.outcome === 'won') {
      dispute.status = row.internal.inquiry ? 'warning_closed' : 'won';
      if (!row.internal.inquiry) this.reinstate(origin, row);
      this.kernel.store.save(row);
      this.kernel.events.emit(origin, 'charge.dispute.closed', dispute);
      if (!row.internal.inquiry) this.kernel.events.emit(origin, 'charge.dispute.funds_reinstated', dispute);
      return;
    }
    // A lost inquiry becomes the chargeback it was the warning of: the funds go, then it closes.
    if (row.internal.inquiry) this.withdraw(origin, row, getAny<Stripe.Charge, Record<string, never>>(this.kernel, 'charge', String(dispute.charge), 'charge'));
    dispute.status = 'lost';
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.dispute.closed', dispute);
  }
}
