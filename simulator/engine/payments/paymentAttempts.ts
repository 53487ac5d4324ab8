import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { SimError, invalidRequest, unexpectedState } from '../../errors.js';
import { type Kernel, type Origin, systemOrigin, unixSeconds } from '../kernel.js';
import { type CardOutcome, type Decline, achOutcome, testCard } from './instruments.js';
import type { Charges } from './charges.js';
import type { Captures } from './captures.js';
import type { PaymentMethodBody, PaymentMethodRow, PaymentMethods } from './paymentMethods.js';
import { assertTypeAllowed, checkAchCapability, getAnyIntent } from './intentRules.js';
import type { AccountChecks, IntentResult, PaymentIntentRow } from './types.js';
import type { CashBalancePayments } from './cashBalancePayments.js';

/**
 * One payment attempt and where it leads: the instrument's outcome decides between approval
 * (captured or held), a decline (a failed charge, the intent back to `requires_payment_method`, a
 * 402), 3DS (`requires_action` until the challenge is answered) and an ACH debit (`processing`
 * until it settles). A decline is not a rollback: the failed charge, the intent's
 * `last_payment_error` and the events are committed, so attempts return `{ intent, error }`
 * instead of throwing card errors.
 */
export class PaymentAttempts {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: AccountChecks,
    private readonly paymentMethods: PaymentMethods,
    private readonly charges: Charges,
    private readonly captures: Captures,
  ) {}

  /** Pays `customer_balance` attempts; set once both exist, as each needs the other. */
  cashBalancePayments: CashBalancePayments | undefined;

  /** One payment attempt with `pm`: the outcome of the instrument decides the next status. */
  attempt(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, returnUrl: string | undefined): IntentResult {
    const pi = row.body;
    assertTypeAllowed(pi, pm);
    if (pm.body.type === 'card_present' || pm.body.type === 'interac_present') {
      throw invalidRequest('card_present PaymentMethods can only be confirmed by a Terminal reader (process_payment_intent).', 'payment_method');
    }
    pi.payment_method = pm.id;
    pi.last_payment_error = null;
    pi.next_action = null;
    if (pm.body.type === 'us_bank_account') {
      checkAchCapability(this.accounts, origin.scope, pi, ['us_bank_account']);
      if (row.internal.microdeposits === 'required') return this.awaitMicrodeposits(origin, row);
      return this.startAch(origin, row, pm);
    }
    if (pm.body.type === 'customer_balance') {
      if (!this.cashBalancePayments) throw new Error('cash balance payments are not wired');
      return this.cashBalancePayments.attempt(origin, row, pm);
    }
    const outcome: CardOutcome = row.internal.authenticated ? { kind: 'approve' } : testCard(pm.internal.cardNumber ?? '').outcome;
    if (outcome.kind === 'authenticate') {
      pi.status = 'requires_action';
      const url = `${this.kernel.config.baseUrl}/_sim/3ds/${pi.id}`;
      pi.next_action = { type: 'redirect_to_url', redirect_to_url: { url, return_url: returnUrl ?? null } };
      this.kernel.store.save(row);
      this.kernel.events.emit(origin, 'payment_intent.requires_action', pi);
      return { intent: pi };
    }
    if (outcome.kind === 'decline') return this.decline(origin, row, pm, outcome.decline);
    return this.approve(origin, row, pm, {});
  }

  /** A declined attempt: failed charge, intent back to `requires_payment_method`, 402 answer. */
  decline(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, decline: Decline): IntentResult {
    const pi = row.body;
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'failed';
    charge.failure_code = decline.code;
    charge.failure_message = decline.message;
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: decline.code === 'processing_error' ? 'not_sent_to_network' : 'declined_by_network',
      reason: decline.declineCode,
      risk_level: 'normal',
      seller_message: decline.code === 'processing_error' ? 'There was an error processing this payment.' : 'The bank did not return any further details with this decline.',
      type: decline.code === 'processing_error' ? 'blocked' : 'issuer_declined',
    };
    this.kernel.store.insert('charge', this.charges.scopeOf(row), charge, {});
    pi.status = 'requires_payment_method';
    pi.latest_charge = charge.id;
    pi.next_action = null;
    pi.processing = null;
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'card_error',
      charge: charge.id,
      code: decline.code as Stripe.PaymentIntent.LastPaymentError.Code,
      decline_code: decline.declineCode,
      doc_url: `https://stripe.com/docs/error-codes/${decline.code.replace(/_/g, '-')}`,
      message: decline.message,
      payment_method: pm.body as unknown as Stripe.PaymentMethod,
    };
    row.internal.authenticated = false;
    row.internal.timerId = null;
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.failed', charge);
    this.kernel.events.emit(origin, 'payment_intent.payment_failed', pi);
    const error = new SimError(402, 'card_error', decline.message, {
      code: decline.code,
      declineCode: decline.declineCode,
      extra: { charge: charge.id, payment_intent: pi, payment_method: pm.body },
    });
    return { intent: pi, error };
  }

  /** An approved authorisation: captured now (automatic) or held for `capture` (manual). */
  approve(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, options: { tip?: number }): IntentResult {
    const pi = row.body;
    if (options.tip) {
      pi.amount += options.tip;
      pi.amount_details = { ...pi.amount_details, tip: { amount: options.tip } };
    }
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'succeeded';
    charge.paid = true;
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'normal',
      risk_score: 20,
      seller_message: 'Payment complete.',
      type: 'authorized',
    };
    if (row.internal.authenticated && charge.payment_method_details?.card) {
      charge.payment_method_details.card.three_d_secure = {
        authentication_flow: 'challenge',
        electronic_commerce_indicator: '05',
        result: 'authenticated',
        result_reason: null,
        transaction_id: newId('3ds').slice(4),
        version: '2.2.0',
      } as Stripe.Charge.PaymentMethodDetails.Card.ThreeDSecure;
    }
    const chargeRow = this.kernel.store.insert<Stripe.Charge, Record<string, never>>('charge', this.charges.scopeOf(row), charge, {});
    pi.latest_charge = charge.id;
    pi.payment_method = pm.id;
    pi.next_action = null;
    pi.processing = null;
    pi.last_payment_error = null;
    row.internal.timerId = null;
    if (pi.capture_method === 'manual') {
      pi.status = 'requires_capture';
      pi.amount_capturable = pi.amount;
      this.kernel.store.save(chargeRow);
      this.kernel.store.save(row);
      this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
      this.kernel.events.emit(origin, 'payment_intent.amount_capturable_updated', pi);
      return { intent: pi };
    }
    this.captures.settle(origin, row, chargeRow, pi.amount);
    this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
    this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
    return { intent: pi };
  }

  /** ACH debit: `processing` now, settled by a persisted timer after the settlement delay. */
  /** Microdeposits are sent: the intent waits until they are verified (`verify_microdeposits`). */
  private awaitMicrodeposits(origin: Origin, row: PaymentIntentRow): IntentResult {
    const pi = row.body;
    pi.status = 'requires_action';
    // Stripe's deposits arrive in one to two business days; the simulator's are there at once.
    pi.next_action = {
      type: 'verify_with_microdeposits',
      verify_with_microdeposits: { arrival_date: unixSeconds(this.kernel.now()), hosted_verification_url: `${this.kernel.config.baseUrl}/_sim/microdeposits/${pi.id}`, microdeposit_type: 'amounts' },
    };
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_intent.requires_action', pi);
    return { intent: pi };
  }

  private startAch(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow): IntentResult {
    const pi = row.body;
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'pending';
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'not_assessed',
      seller_message: 'Payment complete.',
      type: 'authorized',
    };
    this.kernel.store.insert('charge', this.charges.scopeOf(row), charge, {});
    pi.status = 'processing';
    pi.latest_charge = charge.id;
    pi.payment_method = pm.id;
    row.internal.timerId = this.kernel.timers.schedule('ach_settlement', this.kernel.now() + this.kernel.config.achSettlementDelayMs, {
      paymentIntent: pi.id,
      apiVersion: origin.apiVersion,
    });
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.pending', charge);
    this.kernel.events.emit(origin, 'payment_intent.processing', pi);
    return { intent: pi };
  }

  /** Timer: the ACH debit settles (or is returned by the bank). */
  settleAch(payload: { paymentIntent: string; apiVersion: string }): void {
    const row = getAnyIntent(this.kernel, payload.paymentIntent);
    const pi = row.body;
    if (pi.status !== 'processing' || typeof pi.latest_charge !== 'string') return;
    const origin = systemOrigin({ livemode: row.livemode, account: row.account }, payload.apiVersion);
    const chargeRow = this.charges.get(origin.scope, pi.latest_charge);
    const pm = this.kernel.store.find<PaymentMethodBody, { accountNumber?: string }>(String(pi.payment_method));
    const result = achOutcome(pm?.internal.accountNumber ?? '');
    row.internal.timerId = null;
    if (result.succeeds) {
      this.captures.settle(origin, row, chargeRow, chargeRow.body.amount);
      this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
      this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
      return;
    }
    const charge = chargeRow.body;
    charge.status = 'failed';
    charge.failure_code = result.code ?? 'payment_method_provider_decline';
    charge.failure_message = result.message ?? 'The payment was declined.';
    this.kernel.store.save(chargeRow);
    pi.status = 'requires_payment_method';
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'invalid_request_error',
      charge: charge.id,
      code: charge.failure_code as Stripe.PaymentIntent.LastPaymentError.Code,
      message: charge.failure_message,
      payment_method: pm?.body as unknown as Stripe.PaymentMethod,
      payment_method_type: 'us_bank_account',
    };
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.failed', charge);
    this.kernel.events.emit(origin, 'payment_intent.payment_failed', pi);
  }

  /** 3DS challenge outcome, from the simulator's challenge page or the control API. */
  finishAuthentication(origin: Origin, id: string, succeeded: boolean): Stripe.PaymentIntent {
    const row = getAnyIntent(this.kernel, id);
    const pi = row.body;
    if (pi.status !== 'requires_action' || pi.next_action?.type !== 'redirect_to_url') {
      throw unexpectedState(`This PaymentIntent has no pending authentication (status ${pi.status}).`, { payment_intent: pi });
    }
    const scoped: Origin = { ...origin, scope: { livemode: row.livemode, account: row.account } };
    const pm = this.paymentMethods.resolve(scoped, String(pi.payment_method), 'payment_method');
    if (succeeded) {
      row.internal.authenticated = true;
      return this.attempt(scoped, row, pm, pi.next_action.redirect_to_url?.return_url ?? undefined).intent;
    }
    pi.status = 'requires_payment_method';
    pi.next_action = null;
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'invalid_request_error',
      code: 'payment_intent_authentication_failure',
      doc_url: 'https://stripe.com/docs/error-codes/payment-intent-authentication-failure',
      message:
        'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
      payment_method: pm.body as unknown as Stripe.PaymentMethod,
    };
    row.internal.authenticated = false;
    this.kernel.store.save(row);
    this.kernel.events.emit(scoped, 'payment_intent.payment_failed', pi);
    return pi;
  }
}
