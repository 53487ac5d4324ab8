import type Stripe from 'stripe';
import { invalidRequest, unexpectedState } from '../../errors.js';
import { type Kernel, type Origin, systemOrigin } from '../kernel.js';
import { type CardOutcome, DECLINES, cardPresentAmountOutcome, luhnValid, testCard } from '../payments/instruments.js';
import { getAnyIntent, getIntent } from '../payments/intentRules.js';
import type { PaymentAttempts } from '../payments/paymentAttempts.js';
import type { PaymentMethodBody, PaymentMethodInternal, PaymentMethods } from '../payments/paymentMethods.js';
import type { PaymentIntentRow } from '../payments/types.js';
import { tipSuggestions } from '../../../shared/tipping.js';
import type { Configurations } from './configurations.js';
import { type AuthorizationPayload, IDLE_DISPLAY, type ProcessConfigInput, type PresentInput, type ReaderInternal, type ReaderRow, anyReader, busy, findReader, offline } from './types.js';

/**
 * Terminal's server-driven `process_payment_intent` flow (locations, configurations and readers are
 * their own files).
 *
 *   process_payment_intent → action in_progress, intent waits for a card (requires_payment_method)
 *   present_payment_method → intent `processing` for the authorisation window (a persisted timer);
 *                            `payment_intent.processing` and `terminal.reader.action_updated`
 *   window ends            → approved: intent succeeded/requires_capture, action succeeded
 *                            declined: intent requires_payment_method, action failed
 *                            (`terminal.reader.action_succeeded` / `…action_failed`, with the reader)
 *
 * During the window the reader is busy: cancel_action and canceling the intent are refused.
 */

const DEFAULT_CARD_PRESENT_NUMBER = '4242424242424242';

export class ReaderActions {
  constructor(
    private readonly kernel: Kernel,
    private readonly attempts: PaymentAttempts,
    private readonly paymentMethods: PaymentMethods,
    private readonly configurations: Configurations,
  ) {}

  processPaymentIntent(origin: Origin, readerId: string, paymentIntentId: string, processConfig: ProcessConfigInput | undefined): Stripe.Terminal.Reader {
    const reader = findReader(this.kernel, origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.body.action?.status === 'in_progress') throw busy();
    const piRow = getIntent(this.kernel, origin.scope, paymentIntentId);
    const pi = piRow.body;
    if (!pi.payment_method_types.includes('card_present') && !pi.payment_method_types.includes('interac_present')) {
      throw invalidRequest(
        `The PaymentIntent ${pi.id} cannot be processed by a reader: its payment_method_types must include card_present.`,
        'payment_intent',
        'payment_intent_invalid_parameter',
      );
    }
    if (pi.status !== 'requires_payment_method' && pi.status !== 'requires_confirmation') {
      throw unexpectedState(
        `This PaymentIntent has a status of ${pi.status} and cannot be processed. Only a PaymentIntent with a status of requires_payment_method or requires_confirmation can be processed by a reader.`,
        { payment_intent: pi },
      );
    }
    if (piRow.internal.readerId && piRow.internal.readerId !== reader.id) {
      const other = this.kernel.store.find<Stripe.Terminal.Reader, ReaderInternal>(piRow.internal.readerId);
      if (other?.body.action?.status === 'in_progress') {
        throw unexpectedState(`This PaymentIntent is already being processed by reader ${other.id}.`, { payment_intent: pi });
      }
    }
    const eligible = processConfig?.tipping?.amount_eligible;
    if (eligible !== undefined && (!Number.isInteger(eligible) || eligible < 0)) throw invalidRequest('amount_eligible must be a non-negative integer.', 'process_config[tipping][amount_eligible]');
    const action: Stripe.Terminal.Reader.Action = {
      api_error: null,
      failure_code: null,
      failure_message: null,
      process_payment_intent: { payment_intent: pi.id, ...(processConfig ? { process_config: processConfig as Stripe.Terminal.Reader.Action.ProcessPaymentIntent.ProcessConfig } : {}) },
      status: 'in_progress',
      type: 'process_payment_intent',
    };
    reader.body.action = action;
    // A cart shown by set_reader_display stays on screen with the payment it goes with.
    const cart = reader.internal.display?.screen === 'cart' ? reader.internal.display.cart : null;
    const tipping = processConfig?.skip_tipping ? undefined : this.configurations.tippingFor(reader, pi.currency);
    const suggestions = tipping ? tipSuggestions(tipping, eligible ?? pi.amount, pi.currency) : null;
    // An eligible amount of 0 skips the tip screen, as on Stripe's readers.
    const tipScreen = suggestions !== null && eligible !== 0;
    reader.internal.display = {
      screen: tipScreen ? 'tip_selection' : 'collect_payment',
      cart,
      payment_intent: pi.id,
      currency: pi.currency,
      amount: pi.amount,
      tipping: tipScreen ? suggestions : null,
      tip: null,
      total: tipScreen ? null : pi.amount,
      customer_cancellation: processConfig?.enable_customer_cancellation === true,
      message: null,
    };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    piRow.internal.readerId = reader.id;
    this.kernel.store.save(piRow);
    return reader.body;
  }

  private actionIntent(reader: ReaderRow): PaymentIntentRow | undefined {
    const target = reader.body.action?.process_payment_intent?.payment_intent;
    return typeof target === 'string' ? getAnyIntent(this.kernel, target) : undefined;
  }

  cancelAction(origin: Origin, readerId: string): Stripe.Terminal.Reader {
    const reader = findReader(this.kernel, origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.internal.timerId) {
      throw busy('Reader is currently busy authorizing a payment and the action cannot be canceled. Wait for the payment to complete.');
    }
    if (reader.body.action?.status !== 'in_progress') return reader.body;
    const piRow = this.actionIntent(reader);
    if (piRow) {
      piRow.internal.readerId = null;
      this.kernel.store.save(piRow);
    }
    reader.body.action = null;
    reader.internal.display = { ...IDLE_DISPLAY };
    this.kernel.store.save(reader);
    return reader.body;
  }

  presentPaymentMethod(origin: Origin, readerId: string, input: PresentInput): Stripe.Terminal.Reader {
    const reader = findReader(this.kernel, origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.internal.timerId) throw busy();
    const action = reader.body.action;
    if (action?.status !== 'in_progress' || action.type !== 'process_payment_intent') {
      throw invalidRequest('The reader has no in-progress process_payment_intent action to present a payment method to.', undefined, 'terminal_reader_invalid_state');
    }
    const piRow = this.actionIntent(reader);
    if (!piRow) throw invalidRequest('The PaymentIntent of this action no longer exists.');
    const pi = piRow.body;
    if (pi.status === 'canceled') {
      this.finishAction(origin, reader, piRow, { status: 'failed', code: 'payment_intent_canceled', message: 'The PaymentIntent was canceled.' });
      return reader.body;
    }
    const interac = input.type === 'interac_present';
    const number = (input.card_present?.number ?? input.interac_present?.number ?? input.card?.number ?? DEFAULT_CARD_PRESENT_NUMBER).replace(/[\s-]/g, '');
    if (!luhnValid(number)) throw invalidRequest('The card number is not a valid test card number.', 'card_present[number]', 'invalid_number');
    if (input.amount_tip !== undefined && input.amount_tip < 0) throw invalidRequest('amount_tip must be a non-negative integer.', 'amount_tip');
    // Stripe's test helper simulates the on-reader tip with amount_tip; without it, the tip is what
    // the customer chose on the tip selection screen (none if they tapped straight away).
    const display = reader.internal.display;
    const chosen = display?.payment_intent === pi.id && display.screen === 'collect_payment' ? (display.tip ?? 0) : 0;
    const tip = input.amount_tip ?? chosen;
    const outcome = this.outcomeFor(reader, number, pi.amount);
    const pm = this.paymentMethods.createCardPresent(origin.scope, number, interac);
    pi.status = 'processing';
    pi.processing = { type: 'card' } as Stripe.PaymentIntent.Processing;
    pi.payment_method = pm.id;
    const payload: AuthorizationPayload = {
      paymentIntent: pi.id,
      reader: reader.id,
      paymentMethod: pm.id,
      outcome: outcome.kind === 'decline' ? { approve: false, decline: outcome.decline } : { approve: true },
      tip,
      apiVersion: origin.apiVersion,
    };
    const timerId = this.kernel.timers.schedule('card_present_authorization', this.kernel.now() + this.kernel.config.authorizationDelayMs, payload);
    piRow.internal.timerId = timerId;
    reader.internal.timerId = timerId;
    if (display?.payment_intent === pi.id) reader.internal.display = { ...display, screen: 'processing', tip, total: (display.amount ?? pi.amount) + tip };
    this.kernel.store.save(piRow);
    this.kernel.store.save(reader);
    this.kernel.events.emit({ ...origin, scope: { livemode: piRow.livemode, account: piRow.account } }, 'payment_intent.processing', pi);
    // The reader read the card and its action moved on (still in progress): Stripe tells of such a
    // change with `terminal.reader.action_updated`, carrying the reader with its action.
    this.kernel.events.emit({ ...origin, scope: { livemode: reader.livemode, account: reader.account } }, 'terminal.reader.action_updated', reader.body);
    return reader.body;
  }

  /** Scripted outcome first, then the card number's documented behaviour, then the amount's. */
  private outcomeFor(reader: ReaderRow, number: string, amount: number): CardOutcome {
    const scripted = reader.internal.script.shift();
    if (scripted !== undefined) return scripted === 'approve' ? { kind: 'approve' } : { kind: 'decline', decline: DECLINES[scripted] };
    const byNumber = testCard(number).outcome;
    if (byNumber.kind === 'decline') return byNumber;
    return cardPresentAmountOutcome(amount);
  }

  /** Timer: the authorisation window is over and the issuer has answered. */
  completeAuthorization(raw: unknown): void {
    const payload = raw as AuthorizationPayload;
    const piRow = getAnyIntent(this.kernel, payload.paymentIntent);
    const origin = systemOrigin({ livemode: piRow.livemode, account: piRow.account }, payload.apiVersion);
    const pm = this.kernel.store.find<PaymentMethodBody, PaymentMethodInternal>(payload.paymentMethod);
    const reader = this.kernel.store.find<Stripe.Terminal.Reader, ReaderInternal>(payload.reader);
    piRow.internal.timerId = null;
    piRow.internal.readerId = null;
    if (!pm) throw new Error(`payment method ${payload.paymentMethod} vanished`);
    if (reader) reader.internal.timerId = null;
    if (payload.outcome.approve) {
      this.attempts.approve(origin, piRow, pm, { tip: payload.tip });
      if (reader) this.finishAction(origin, reader, piRow, { status: 'succeeded' });
      return;
    }
    const decline = payload.outcome.decline;
    this.attempts.decline(origin, piRow, pm, decline);
    if (reader) this.finishAction(origin, reader, piRow, { status: 'failed', code: decline.code, message: decline.message });
  }

  private finishAction(origin: Origin, reader: ReaderRow, piRow: PaymentIntentRow, result: { status: 'succeeded' } | { status: 'failed'; code: string; message: string }): void {
    const action = reader.body.action;
    if (!action) return;
    action.status = result.status;
    action.failure_code = result.status === 'failed' ? result.code : null;
    action.failure_message = result.status === 'failed' ? result.message : null;
    if (action.process_payment_intent) action.process_payment_intent.payment_intent = piRow.id;
    // The outcome screen; the cart it was for is done with.
    const shown = reader.internal.display ?? IDLE_DISPLAY;
    reader.internal.display = {
      ...shown,
      screen: result.status === 'succeeded' ? 'approved' : result.code === 'customer_canceled' ? 'canceled' : 'declined',
      cart: null,
      total: result.status === 'succeeded' ? piRow.body.amount : shown.total,
      message: result.status === 'failed' ? result.message : null,
    };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    const readerOrigin: Origin = { ...origin, scope: { livemode: reader.livemode, account: reader.account } };
    this.kernel.events.emit(readerOrigin, result.status === 'succeeded' ? 'terminal.reader.action_succeeded' : 'terminal.reader.action_failed', reader.body);
  }

  /** The customer presses cancel on the reader while it waits for a card. */
  customerCancel(origin: Origin, readerId: string): Stripe.Terminal.Reader {
    const reader = anyReader(this.kernel, readerId);
    if (reader.internal.timerId) throw busy('The reader is authorizing a payment; the customer can no longer cancel.');
    if (reader.body.action?.status !== 'in_progress') {
      throw invalidRequest('The reader has no in-progress action for the customer to cancel.', undefined, 'terminal_reader_invalid_state');
    }
    if (reader.body.action.process_payment_intent?.process_config?.enable_customer_cancellation !== true) {
      throw invalidRequest(
        'The reader shows no cancel button: the payment was sent without process_config[enable_customer_cancellation]=true.',
        undefined,
        'terminal_reader_invalid_state',
      );
    }
    const piRow = this.actionIntent(reader);
    if (piRow) {
      piRow.internal.readerId = null;
      this.kernel.store.save(piRow);
      this.finishAction(origin, reader, piRow, { status: 'failed', code: 'customer_canceled', message: 'This action was canceled by the customer on the reader.' });
    }
    return reader.body;
  }
}
