import type { Mode } from '../db/schema.js';
import { invalid } from '../errors.js';
import { ProcessorFailure } from './errors.js';
import type {
  AccountLink,
  AccountLinkRequest,
  BankAccountRequest,
  CartRequest,
  CustomerFields,
  DisputeEvidence,
  IntentCreation,
  IntentRequest,
  LocationRequest,
  PaymentProcessor,
  PayoutRequest,
  PresentedCard,
  ProcessConfig,
  ReaderRequest,
  RefundRequest,
  TippingRequest,
} from './port.js';
import { type TipSuggestions, tipSuggestions } from '../../shared/tipping.js';
import type {
  ProcessorAccount,
  ProcessorBalance,
  ProcessorBankAccount,
  ProcessorCancellationReason,
  ProcessorCustomer,
  ProcessorDispute,
  ProcessorDisputeStatus,
  ProcessorEvent,
  ProcessorPaymentIntent,
  ProcessorPayout,
  ProcessorReader,
  ProcessorRefund,
} from './types.js';

/** The processor's methods, by name, for scripting failures and reading the call log. */
export type ProcessorCall = Exclude<keyof PaymentProcessor, 'name' | 'kind' | 'publishableKey' | 'browserUrl'>;

/** The test payment methods the fake knows, with what confirming with each does. */
const DECLINES: Record<string, { code: string; declineCode?: string; message: string }> = {
  pm_card_chargeDeclined: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  pm_card_chargeDeclinedExpiredCard: { code: 'expired_card', message: 'Your card has expired.' },
};

/** Stripe's statuses from which a PaymentIntent can still be canceled. */
const CANCELABLE = new Set(['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action']);

interface IntentRecord {
  id: string;
  mode: Mode;
  status: ProcessorPaymentIntent['status'];
  amount: number;
  amountReceived: number;
  currency: string;
  captureMethod: 'automatic' | 'manual';
  clientSecret: string;
  metadata: Record<string, string>;
  error: { code: string; decline_code?: string; message: string } | null;
  card: { brand: string; last4: string; kind: 'card' | 'card_present' } | null;
  cancellationReason: ProcessorCancellationReason | null;
  tip: number;
  refunded: number;
  customer: string | null;
}

interface DisputeRecord {
  id: string;
  mode: Mode;
  intent: string;
  amount: number;
  currency: string;
  reason: string;
  status: ProcessorDisputeStatus;
  evidence: Record<string, string>;
  submissions: number;
  dueBy: number;
  created: number;
  /** Signed balance movements: the withdrawal (negative) and a reinstatement (positive). */
  movements: number[];
}

interface PayoutRecord {
  id: string;
  mode: Mode;
  account: string;
  amount: number;
  currency: string;
  status: 'pending' | 'in_transit' | 'paid' | 'failed' | 'canceled';
  automatic: boolean;
  description: string | null;
  failureCode: string | null;
  created: number;
}

/** What Stripe's test mode does with submitted evidence whose `uncategorized_text` says so. */
const EVIDENCE_OUTCOMES: Record<string, ProcessorDisputeStatus> = { winning_evidence: 'won', losing_evidence: 'lost' };

/** Seven days to answer, as card networks commonly give (Stripe shows the network's date). */
const EVIDENCE_WINDOW_S = 7 * 24 * 3600;

/** What `retrieveAccount` reports of a connected account (Stripe's fields, camel-cased). */
export interface FakeAccountState {
  type: 'express' | 'custom';
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  currentlyDue: string[];
  pastDue: string[];
  pendingVerification: string[];
  /** Epoch seconds, as Stripe gives it. */
  currentDeadline: number | null;
  disabledReason: string | null;
  errors: { code: string; reason: string; requirement: string }[];
}

interface ReaderRecord {
  id: string;
  mode: Mode;
  location: string;
  label: string;
  action: { intent: string; status: 'in_progress' | 'succeeded' | 'failed'; failureCode: string | null } | null;
  /** What the reader shows: the cart set before the payment, and the payment's tip screen. */
  screen: ReaderScreen;
}

/** A fake reader's screen, for tests to read as a customer would. */
export interface ReaderScreen {
  cart: CartRequest | null;
  config: ProcessConfig | null;
  tipping: TipSuggestions | null;
  /** The tip the customer chose on the tip screen, until the card is presented. */
  tip: number | null;
}

const BLANK_SCREEN: ReaderScreen = { cart: null, config: null, tipping: null, tip: null };

/**
 * An in-memory `PaymentProcessor` for unit tests of the domain: stateful like Stripe's test mode
 * for the calls the domain makes (idempotency keys honoured, state checks refused with Stripe's
 * codes), with failures scripted per call. Not a simulator: no events, no timing, no wire format.
 */
export class InMemoryProcessor implements PaymentProcessor {
  readonly name = 'in-memory';
  readonly kind = 'simulator' as const;
  /** Every call made, in order, with its mode. */
  readonly calls: { call: ProcessorCall; mode: Mode | null }[] = [];
  /** Capability statuses by `account:capability`; anything unlisted is active. */
  readonly capabilities = new Map<string, string>();
  /** The status new refunds take (Stripe settles most card refunds at once). */
  refundStatus: 'succeeded' | 'pending' | 'failed' = 'succeeded';

  /** Account Links made, in order. */
  readonly accountLinks: ({ mode: Mode } & AccountLinkRequest)[] = [];

  readonly #accounts = new Map<string, string>();
  readonly #accountStates = new Map<string, FakeAccountState>();
  readonly #intents = new Map<string, IntentRecord>();
  readonly #refunds = new Map<string, ProcessorRefund>();
  readonly #readers = new Map<string, ReaderRecord>();
  /** Tipping per Terminal Configuration, and the configuration each location is assigned. */
  readonly #configurations = new Map<string, TippingRequest | null>();
  readonly #locationConfigurations = new Map<string, string>();
  readonly #disputes = new Map<string, DisputeRecord>();
  readonly #payouts = new Map<string, PayoutRecord>();
  /** Balances by `account:currency`. */
  readonly #balances = new Map<string, { available: number; pending: number }>();
  readonly #customers = new Map<string, ProcessorCustomer>();
  /** Bank accounts by connected account, the newest (the default) last. */
  readonly #banks = new Map<string, ProcessorBankAccount[]>();
  readonly #deletedCustomers = new Set<string>();
  /** The processor's clock in seconds, for `created` stamps: tests set it to match theirs. */
  nowSeconds = Math.floor(Date.UTC(2026, 10, 23, 12) / 1000);
  readonly #byKey = new Map<string, unknown>();
  readonly #failures = new Map<ProcessorCall, unknown[]>();
  #next = 0;

  /** The next call of `call` throws `error` (a `ProcessorFailure`, or anything else) instead of running. */
  failNext(call: ProcessorCall, error: unknown, times = 1): void {
    const queue = this.#failures.get(call) ?? [];
    for (let i = 0; i < times; i += 1) queue.push(error);
    this.#failures.set(call, queue);
  }

  /** How many times `call` was made. */
  count(call: ProcessorCall): number {
    return this.calls.filter((c) => c.call === call).length;
  }

  /** The processor's side of a payment moving on its own (a card presented, an ACH debit clearing). */
  settle(intentId: string, status: 'succeeded' | 'processing' | 'canceled'): void {
    const intent = this.#intent(intentId);
    intent.status = status;
    if (status === 'succeeded') intent.amountReceived = intent.amount;
  }

  /**
   * A cardholder disputes a paid PaymentIntent (what Stripe's dispute test cards make happen). A
   * formal dispute withdraws the amount at once; an inquiry (`warning_needs_response`) does not.
   */
  openDispute(intentId: string, options: { reason?: string; inquiry?: boolean } = {}): ProcessorDispute {
    const intent = this.#intent(intentId);
    const dispute: DisputeRecord = {
      id: this.#id('dp'),
      mode: intent.mode,
      intent: intent.id,
      amount: intent.amountReceived,
      currency: intent.currency,
      reason: options.reason ?? (options.inquiry ? 'general' : 'fraudulent'),
      status: options.inquiry ? 'warning_needs_response' : 'needs_response',
      evidence: {},
      submissions: 0,
      dueBy: this.nowSeconds + EVIDENCE_WINDOW_S,
      created: this.nowSeconds,
      movements: options.inquiry ? [] : [-intent.amountReceived],
    };
    this.#disputes.set(dispute.id, dispute);
    return this.#presentDispute(dispute);
  }

  /** Sets a connected account's balance in one currency. */
  setBalance(account: string, currency: string, balance: { available: number; pending: number }): void {
    this.#balances.set(`${account}:${currency}`, { ...balance });
  }

  /** The bank's answer to a payout (Stripe's test bank accounts decide it there). */
  settlePayout(id: string, status: 'in_transit' | 'paid' | 'failed' | 'canceled', failureCode?: string): ProcessorPayout {
    const payout = this.#payouts.get(id);
    if (!payout) throw missing('payout', id);
    payout.status = status;
    payout.failureCode = status === 'failed' ? (failureCode ?? 'could_not_process') : null;
    return this.#presentPayout(payout);
  }

  /** A payout the processor made on its schedule (automatic payouts), with its available balance. */
  automaticPayout(mode: Mode, account: string, amount: number, currency: string): ProcessorPayout {
    const payout: PayoutRecord = { id: this.#id('po'), mode, account, amount, currency, status: 'pending', automatic: true, description: 'STRIPE PAYOUT', failureCode: null, created: this.nowSeconds };
    this.#payouts.set(payout.id, payout);
    return this.#presentPayout(payout);
  }

  publishableKey(mode: Mode): string | null {
    return `pk_${mode}_in_memory`;
  }

  browserUrl(): string | null {
    return null;
  }

  async connectedAccount(merchantId: string, mode: Mode): Promise<string> {
    this.#enter('connectedAccount', mode);
    const key = `${merchantId}:${mode}`;
    let account = this.#accounts.get(key);
    if (!account) this.#accounts.set(key, (account = this.#id('acct')));
    return account;
  }

  async merchantOfAccount(mode: Mode, account: string): Promise<string | null> {
    this.#enter('merchantOfAccount', mode);
    for (const [key, id] of this.#accounts) if (id === account && key.endsWith(`:${mode}`)) return key.slice(0, -mode.length - 1);
    return null;
  }

  async provisionMissingAccounts(): Promise<number> {
    this.#enter('provisionMissingAccounts', null);
    return 0;
  }

  /**
   * A connected account's standing, as Stripe would report it: ready to charge and pay out unless
   * a test says otherwise (an account still onboarding, one whose verification failed).
   */
  setAccountState(account: string, state: Partial<FakeAccountState>): void {
    this.#accountStates.set(account, { ...this.#accountState(account), ...state });
  }

  async retrieveAccount(mode: Mode, account: string): Promise<ProcessorAccount> {
    this.#enter('retrieveAccount', mode);
    const state = this.#accountState(account);
    const requirements = {
      alternatives: [],
      current_deadline: state.currentDeadline,
      currently_due: state.currentlyDue,
      disabled_reason: state.disabledReason,
      errors: state.errors,
      eventually_due: state.currentlyDue,
      past_due: state.pastDue,
      pending_verification: state.pendingVerification,
    };
    return {
      id: account,
      object: 'account',
      type: state.type,
      charges_enabled: state.chargesEnabled,
      payouts_enabled: state.payoutsEnabled,
      details_submitted: state.detailsSubmitted,
      requirements,
    } as unknown as ProcessorAccount;
  }

  async createAccountLink(mode: Mode, request: AccountLinkRequest): Promise<AccountLink> {
    this.#enter('createAccountLink', mode);
    this.accountLinks.push({ mode, ...request });
    return { url: `https://connect.fake.test/setup/${this.#id('al')}`, expiresAt: this.nowSeconds * 1000 + 300_000 };
  }

  #accountState(account: string): FakeAccountState {
    return (
      this.#accountStates.get(account) ?? {
        type: 'custom',
        chargesEnabled: true,
        payoutsEnabled: true,
        detailsSubmitted: true,
        currentlyDue: [],
        pastDue: [],
        pendingVerification: [],
        currentDeadline: null,
        disabledReason: null,
        errors: [],
      }
    );
  }

  async capabilityStatus(mode: Mode, account: string, capability: string): Promise<string> {
    this.#enter('capabilityStatus', mode);
    return this.capabilities.get(`${account}:${capability}`) ?? 'active';
  }

  async createIntent(mode: Mode, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation> {
    this.#enter('createIntent', mode);
    return this.#once(idempotencyKey, () => {
      const id = this.#id('pi');
      const intent: IntentRecord = {
        id,
        mode,
        status: 'requires_payment_method',
        amount: request.amount,
        amountReceived: 0,
        currency: request.currency,
        captureMethod: request.captureMethod,
        clientSecret: `${id}_secret_${this.#next}`,
        metadata: request.metadata,
        error: null,
        card: null,
        cancellationReason: null,
        tip: 0,
        refunded: 0,
        customer: request.customer ?? null,
      };
      this.#intents.set(id, intent);
      if (!request.confirm || !request.paymentMethod) return { intent: this.#present(intent) };
      if (request.methods.includes('us_bank_account')) {
        intent.status = 'processing';
        return { intent: this.#present(intent) };
      }
      const decline = DECLINES[request.paymentMethod];
      if (decline) {
        intent.error = { code: decline.code, ...(decline.declineCode ? { decline_code: decline.declineCode } : {}), message: decline.message };
        const failure = new ProcessorFailure('card', decline.message, { status: 402, code: decline.code, ...(decline.declineCode ? { declineCode: decline.declineCode } : {}), paymentIntent: id });
        return { intent: this.#present(intent), decline: failure };
      }
      intent.card = { brand: 'visa', last4: '4242', kind: 'card' };
      intent.status = request.captureMethod === 'manual' ? 'requires_capture' : 'succeeded';
      if (intent.status === 'succeeded') intent.amountReceived = intent.amount;
      return { intent: this.#present(intent) };
    });
  }

  async retrieveIntent(mode: Mode, id: string): Promise<ProcessorPaymentIntent> {
    this.#enter('retrieveIntent', mode);
    return this.#present(this.#intent(id));
  }

  async captureIntent(mode: Mode, id: string, amount: number | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent> {
    this.#enter('captureIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id);
      if (intent.status !== 'requires_capture') throw unexpectedState(intent);
      intent.status = 'succeeded';
      intent.amountReceived = amount ?? intent.amount;
      return this.#present(intent);
    });
  }

  async cancelIntent(mode: Mode, id: string, reason: ProcessorCancellationReason | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent> {
    this.#enter('cancelIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id);
      if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent);
      intent.status = 'canceled';
      intent.cancellationReason = reason ?? null;
      return this.#present(intent);
    });
  }

  async createRefund(mode: Mode, request: RefundRequest, idempotencyKey: string): Promise<ProcessorRefund> {
    this.#enter('createRefund', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(request.paymentIntent);
      if (intent.status !== 'succeeded') throw invalidRequest('charge_not_refundable', 'This PaymentIntent has no successful charge to refund.');
      if (request.amount > intent.amountReceived - intent.refunded) {
        throw invalidRequest('amount_too_large', `Refund amount (${request.amount}) is greater than unrefunded amount on charge (${intent.amountReceived - intent.refunded})`, 'amount');
      }
      if (this.refundStatus !== 'failed') intent.refunded += request.amount;
      const refund = {
        id: this.#id('re'),
        object: 'refund',
        amount: request.amount,
        currency: intent.currency,
        payment_intent: intent.id,
        status: this.refundStatus,
        failure_reason: this.refundStatus === 'failed' ? 'unknown' : null,
        reason: request.reason ?? null,
        metadata: request.metadata,
      } as unknown as ProcessorRefund;
      this.#refunds.set(refund.id, refund);
      return refund;
    });
  }

  async retrieveRefund(mode: Mode, id: string): Promise<ProcessorRefund> {
    this.#enter('retrieveRefund', mode);
    const refund = this.#refunds.get(id);
    if (!refund) throw missing('refund', id);
    return refund;
  }

  async listRefunds(mode: Mode, paymentIntent: string): Promise<ProcessorRefund[]> {
    this.#enter('listRefunds', mode);
    return [...this.#refunds.values()].filter((r) => r.payment_intent === paymentIntent);
  }

  async createLocation(mode: Mode, _request: LocationRequest, idempotencyKey: string): Promise<{ id: string }> {
    this.#enter('createLocation', mode);
    return this.#once(idempotencyKey, () => ({ id: this.#id('tml') }));
  }

  async registerReader(mode: Mode, request: ReaderRequest, idempotencyKey: string): Promise<ProcessorReader> {
    this.#enter('registerReader', mode);
    return this.#once(idempotencyKey, () => {
      if (request.registrationCode !== 'simulated-wpe') throw invalidRequest('invalid_registration_code', 'The registration code is not valid', 'registration_code');
      const reader: ReaderRecord = { id: this.#id('tmr'), mode, location: request.location, label: request.label, action: null, screen: BLANK_SCREEN };
      this.#readers.set(reader.id, reader);
      return this.#presentReader(reader);
    });
  }

  async listReaders(mode: Mode, location?: string): Promise<ProcessorReader[]> {
    this.#enter('listReaders', mode);
    return [...this.#readers.values()].filter((r) => r.mode === mode && (!location || r.location === location)).map((r) => this.#presentReader(r));
  }

  async retrieveReader(mode: Mode, id: string): Promise<ProcessorReader | null> {
    this.#enter('retrieveReader', mode);
    const reader = this.#readers.get(id);
    return reader ? this.#presentReader(reader) : null;
  }

  async deleteReader(mode: Mode, id: string): Promise<void> {
    this.#enter('deleteReader', mode);
    if (!this.#readers.delete(id)) throw missing('terminal.reader', id);
  }

  async configureLocationTipping(mode: Mode, location: string, configuration: string | null, tipping: TippingRequest | null, idempotencyKey: string): Promise<string> {
    this.#enter('configureLocationTipping', mode);
    return this.#once(idempotencyKey, () => {
      const id = configuration ?? this.#id('tmc');
      this.#configurations.set(id, tipping ? { ...tipping } : null);
      this.#locationConfigurations.set(location, id);
      return id;
    });
  }

  async processPaymentIntent(mode: Mode, readerId: string, paymentIntent: string, config?: ProcessConfig): Promise<ProcessorReader> {
    this.#enter('processPaymentIntent', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status === 'in_progress') throw invalidRequest('terminal_reader_busy', 'The reader is busy with another action');
    const intent = this.#intent(paymentIntent);
    reader.action = { intent: paymentIntent, status: 'in_progress', failureCode: null };
    const configId = this.#locationConfigurations.get(reader.location);
    const tipping = configId ? this.#configurations.get(configId) : null;
    const eligible = config?.tipEligibleAmount ?? intent.amount;
    const suggestions = tipping && tipping.currency === intent.currency && !config?.skipTipping && eligible > 0 ? tipSuggestions({ percentages: tipping.percentages, fixed_amounts: tipping.fixedAmounts, smart_tip_threshold: tipping.smartTipThreshold }, eligible, intent.currency) : null;
    reader.screen = { cart: reader.screen.cart, config: config ?? null, tipping: suggestions, tip: null };
    return this.#presentReader(reader);
  }

  async setReaderDisplay(mode: Mode, readerId: string, cart: CartRequest): Promise<ProcessorReader> {
    this.#enter('setReaderDisplay', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status === 'in_progress') throw invalidRequest('terminal_reader_busy', 'The reader is busy with another action');
    reader.screen = { ...BLANK_SCREEN, cart: { ...cart, lineItems: cart.lineItems.map((l) => ({ ...l })) } };
    return this.#presentReader(reader);
  }

  /** Test hook: what the reader shows now. */
  readerScreen(readerId: string): ReaderScreen {
    return this.#reader(readerId).screen;
  }

  /** Test hook: the customer picks tip suggestion `option` (1–3) on the tip screen. */
  chooseTip(readerId: string, option: number): number {
    const reader = this.#reader(readerId);
    const picked = reader.screen.tipping?.options.find((o) => o.option === option);
    if (!picked) throw new Error(`the reader shows no tip option ${option}`);
    reader.screen = { ...reader.screen, tip: picked.amount };
    return picked.amount;
  }

  /** Test hook: the customer presses cancel on the reader (only shown with enableCustomerCancellation). */
  customerCancel(readerId: string): void {
    const reader = this.#reader(readerId);
    if (reader.action?.status !== 'in_progress' || !reader.screen.config?.enableCustomerCancellation) throw new Error('the reader shows no cancel button');
    reader.action = { ...reader.action, status: 'failed', failureCode: 'customer_canceled' };
    reader.screen = BLANK_SCREEN;
  }

  async cancelReaderAction(mode: Mode, readerId: string): Promise<void> {
    this.#enter('cancelReaderAction', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status === 'in_progress' && this.#intent(reader.action.intent).status === 'processing') {
      throw invalidRequest('terminal_reader_busy', 'The reader is authorising a card');
    }
    reader.action = null;
    reader.screen = BLANK_SCREEN;
  }

  async presentPaymentMethod(mode: Mode, readerId: string, card: PresentedCard): Promise<ProcessorReader> {
    this.#enter('presentPaymentMethod', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status !== 'in_progress') throw invalidRequest('terminal_reader_invalid_state', 'The reader has no action in progress');
    const intent = this.#intent(reader.action.intent);
    intent.tip = card.amountTip ?? reader.screen.tip ?? 0;
    reader.screen = BLANK_SCREEN;
    intent.amount += intent.tip;
    intent.card = { brand: 'visa', last4: (card.cardNumber ?? '4242424242424242').slice(-4), kind: 'card_present' };
    intent.status = 'succeeded';
    intent.amountReceived = intent.amount;
    reader.action = { ...reader.action, status: 'succeeded' };
    return this.#presentReader(reader);
  }

  async listDisputes(mode: Mode, filter: { paymentIntent?: string; createdSince?: number }): Promise<ProcessorDispute[]> {
    this.#enter('listDisputes', mode);
    return [...this.#disputes.values()]
      .filter((d) => d.mode === mode && (!filter.paymentIntent || d.intent === filter.paymentIntent) && (filter.createdSince === undefined || d.created * 1000 >= filter.createdSince))
      .map((d) => this.#presentDispute(d));
  }

  async retrieveDispute(mode: Mode, id: string): Promise<ProcessorDispute> {
    this.#enter('retrieveDispute', mode);
    return this.#presentDispute(this.#dispute(id));
  }

  async updateDispute(mode: Mode, id: string, update: DisputeEvidence, idempotencyKey: string): Promise<ProcessorDispute> {
    this.#enter('updateDispute', mode);
    return this.#once(idempotencyKey, () => {
      const dispute = this.#dispute(id);
      if (!['needs_response', 'warning_needs_response'].includes(dispute.status)) throw invalidRequest('dispute_not_open', `This dispute is ${dispute.status} and can no longer take evidence.`);
      Object.assign(dispute.evidence, update.evidence);
      if (update.submit) {
        dispute.submissions += 1;
        const outcome = EVIDENCE_OUTCOMES[dispute.evidence.uncategorized_text ?? ''];
        if (dispute.status === 'warning_needs_response') dispute.status = outcome ? 'warning_closed' : 'warning_under_review';
        else dispute.status = outcome ?? 'under_review';
        if (dispute.status === 'won') dispute.movements.push(dispute.amount);
      }
      return this.#presentDispute(dispute);
    });
  }

  async closeDispute(mode: Mode, id: string, idempotencyKey: string): Promise<ProcessorDispute> {
    this.#enter('closeDispute', mode);
    return this.#once(idempotencyKey, () => {
      const dispute = this.#dispute(id);
      if (!['needs_response', 'warning_needs_response'].includes(dispute.status)) throw invalidRequest('dispute_not_open', `This dispute is ${dispute.status} and cannot be closed.`);
      dispute.status = dispute.status === 'warning_needs_response' ? 'warning_closed' : 'lost';
      return this.#presentDispute(dispute);
    });
  }

  async retrieveBalance(mode: Mode, account: string): Promise<ProcessorBalance> {
    this.#enter('retrieveBalance', mode);
    const entries = [...this.#balances.entries()].filter(([key]) => key.startsWith(`${account}:`));
    const side = (which: 'available' | 'pending') => entries.map(([key, b]) => ({ amount: b[which], currency: key.slice(account.length + 1) }));
    return { object: 'balance', livemode: mode === 'live', available: side('available'), pending: side('pending') } as ProcessorBalance;
  }

  async createPayout(mode: Mode, request: PayoutRequest, idempotencyKey: string): Promise<ProcessorPayout> {
    this.#enter('createPayout', mode);
    return this.#once(idempotencyKey, () => {
      const balance = this.#balances.get(`${request.account}:${request.currency}`);
      if (!balance || balance.available < request.amount) {
        throw invalidRequest('balance_insufficient', 'You have insufficient funds in your Stripe account for this transfer.', 'amount');
      }
      balance.available -= request.amount;
      const payout: PayoutRecord = {
        id: this.#id('po'),
        mode,
        account: request.account,
        amount: request.amount,
        currency: request.currency,
        status: 'pending',
        automatic: false,
        description: request.description ?? null,
        failureCode: null,
        created: this.nowSeconds,
      };
      this.#payouts.set(payout.id, payout);
      return this.#presentPayout(payout);
    });
  }

  async retrievePayout(mode: Mode, account: string, id: string): Promise<ProcessorPayout> {
    this.#enter('retrievePayout', mode);
    const payout = this.#payouts.get(id);
    if (!payout || payout.account !== account) throw missing('payout', id);
    return this.#presentPayout(payout);
  }

  async addBankAccount(mode: Mode, request: BankAccountRequest, idempotencyKey: string): Promise<ProcessorBankAccount> {
    this.#enter('addBankAccount', mode);
    return this.#once(idempotencyKey, () => {
      if (!/^\d{4,17}$/.test(request.accountNumber)) throw invalidRequest('account_number_invalid', 'The account number is not valid', 'account_number');
      const banks = (this.#banks.get(request.account) ?? []).map((b) => ({ ...b, default_for_currency: b.currency === request.currency ? false : b.default_for_currency }));
      const bank = {
        id: this.#id('ba'),
        object: 'bank_account',
        account: request.account,
        bank_name: 'STRIPE TEST BANK',
        last4: request.accountNumber.slice(-4),
        routing_number: request.routingNumber ?? null,
        country: request.country,
        currency: request.currency,
        account_holder_name: request.holderName ?? null,
        default_for_currency: true,
        status: 'new',
      } as unknown as ProcessorBankAccount;
      this.#banks.set(request.account, [...banks, bank]);
      return bank;
    });
  }

  async listBankAccounts(mode: Mode, account: string): Promise<ProcessorBankAccount[]> {
    this.#enter('listBankAccounts', mode);
    return [...(this.#banks.get(account) ?? [])];
  }

  async createCustomer(mode: Mode, fields: CustomerFields, idempotencyKey: string): Promise<ProcessorCustomer> {
    this.#enter('createCustomer', mode);
    return this.#once(idempotencyKey, () => {
      const customer = { id: this.#id('cus'), object: 'customer', livemode: mode === 'live', name: null, email: null, phone: null, description: null, metadata: {} } as unknown as ProcessorCustomer;
      this.#customers.set(customer.id, customer);
      return this.#applyCustomer(customer, fields);
    });
  }

  async updateCustomer(mode: Mode, id: string, fields: CustomerFields, idempotencyKey: string): Promise<ProcessorCustomer> {
    this.#enter('updateCustomer', mode);
    return this.#once(idempotencyKey, () => {
      const customer = this.#customers.get(id);
      if (!customer || this.#deletedCustomers.has(id)) throw missing('customer', id);
      return this.#applyCustomer(customer, fields);
    });
  }

  async deleteCustomer(mode: Mode, id: string): Promise<void> {
    this.#enter('deleteCustomer', mode);
    if (this.#customers.has(id)) this.#deletedCustomers.add(id);
  }

  /** The processor's copy of a customer as it stands, and whether it was deleted. */
  customer(id: string): { customer: ProcessorCustomer; deleted: boolean } | undefined {
    const customer = this.#customers.get(id);
    return customer ? { customer: { ...customer }, deleted: this.#deletedCustomers.has(id) } : undefined;
  }

  async registerWebhookEndpoint(): Promise<void> {
    this.#enter('registerWebhookEndpoint', null);
  }

  /** Accepts a body signed `valid`; anything else is refused as a forged event would be. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProcessorEvent {
    if (signature !== 'valid') throw invalid(undefined, 'Processor event signature verification failed', 'signature_invalid');
    return JSON.parse(rawBody.toString('utf8')) as ProcessorEvent;
  }

  #enter(call: ProcessorCall, mode: Mode | null): void {
    this.calls.push({ call, mode });
    const queue = this.#failures.get(call);
    if (queue?.length) throw queue.shift();
  }

  /** Stripe's idempotency: a key already used answers what it answered the first time. */
  #once<T>(key: string, work: () => T): T {
    if (this.#byKey.has(key)) return this.#byKey.get(key) as T;
    const result = work();
    this.#byKey.set(key, result);
    return result;
  }

  #id(prefix: string): string {
    this.#next += 1;
    return `${prefix}_fake${String(this.#next).padStart(6, '0')}`;
  }

  #intent(id: string): IntentRecord {
    const intent = this.#intents.get(id);
    if (!intent) throw missing('payment_intent', id);
    return intent;
  }

  #dispute(id: string): DisputeRecord {
    const dispute = this.#disputes.get(id);
    if (!dispute) throw missing('dispute', id);
    return dispute;
  }

  #applyCustomer(customer: ProcessorCustomer, fields: CustomerFields): ProcessorCustomer {
    const record = customer as unknown as Record<string, unknown>;
    for (const key of ['name', 'email', 'phone', 'description'] as const) if (fields[key] !== undefined) record[key] = fields[key];
    if (fields.metadata) {
      const metadata = { ...customer.metadata };
      for (const [key, value] of Object.entries(fields.metadata)) {
        if (value === '') delete metadata[key];
        else metadata[key] = value;
      }
      record.metadata = metadata;
    }
    return { ...customer };
  }

  #presentDispute(dispute: DisputeRecord): ProcessorDispute {
    return {
      id: dispute.id,
      object: 'dispute',
      livemode: dispute.mode === 'live',
      amount: dispute.amount,
      currency: dispute.currency,
      reason: dispute.reason,
      status: dispute.status,
      payment_intent: dispute.intent,
      charge: `ch_${dispute.intent}`,
      created: dispute.created,
      evidence: { ...dispute.evidence },
      evidence_details: { due_by: dispute.dueBy, has_evidence: Object.keys(dispute.evidence).length > 0, past_due: false, submission_count: dispute.submissions },
      balance_transactions: dispute.movements.map((amount, i) => ({ id: `txn_${dispute.id}_${i}`, object: 'balance_transaction', amount, currency: dispute.currency, reporting_category: 'dispute' })),
      is_charge_refundable: false,
      metadata: {},
    } as unknown as ProcessorDispute;
  }

  #presentPayout(payout: PayoutRecord): ProcessorPayout {
    return {
      id: payout.id,
      object: 'payout',
      livemode: payout.mode === 'live',
      amount: payout.amount,
      currency: payout.currency,
      status: payout.status,
      automatic: payout.automatic,
      description: payout.description,
      // Stripe's standard payouts to a US bank arrive two business days later.
      arrival_date: payout.created + 2 * 24 * 3600,
      created: payout.created,
      failure_code: payout.failureCode,
      failure_message: payout.failureCode ? 'The bank could not process this payout.' : null,
      metadata: {},
    } as unknown as ProcessorPayout;
  }

  #reader(id: string): ReaderRecord {
    const reader = this.#readers.get(id);
    if (!reader) throw missing('terminal.reader', id);
    return reader;
  }

  /** The fields of a PaymentIntent the domain reads, in Stripe's shape. */
  #present(intent: IntentRecord): ProcessorPaymentIntent {
    const charge = intent.card
      ? { id: `ch_${intent.id}`, object: 'charge', payment_method_details: { type: intent.card.kind, [intent.card.kind]: { brand: intent.card.brand, last4: intent.card.last4 } } }
      : null;
    return {
      id: intent.id,
      object: 'payment_intent',
      livemode: intent.mode === 'live',
      status: intent.status,
      amount: intent.amount,
      amount_received: intent.amountReceived,
      amount_details: { tip: intent.tip ? { amount: intent.tip } : {} },
      currency: intent.currency,
      capture_method: intent.captureMethod,
      client_secret: intent.clientSecret,
      metadata: intent.metadata,
      last_payment_error: intent.error,
      latest_charge: charge,
      cancellation_reason: intent.cancellationReason,
      customer: intent.customer,
    } as unknown as ProcessorPaymentIntent;
  }

  #presentReader(reader: ReaderRecord): ProcessorReader {
    return {
      id: reader.id,
      object: 'terminal.reader',
      livemode: reader.mode === 'live',
      label: reader.label,
      location: reader.location,
      serial_number: `SN-${reader.id}`,
      device_type: 'simulated_wisepos_e',
      status: 'online',
      last_seen_at: null,
      action: reader.action
        ? { type: 'process_payment_intent', status: reader.action.status, failure_code: reader.action.failureCode, process_payment_intent: { payment_intent: reader.action.intent } }
        : null,
    } as unknown as ProcessorReader;
  }
}

function invalidRequest(code: string, message: string, param?: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', message, { status: 400, code, ...(param ? { param } : {}) });
}

function missing(object: string, id: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', `No such ${object}: '${id}'`, { status: 404, code: 'resource_missing', param: 'id' });
}

function unexpectedState(intent: IntentRecord): ProcessorFailure {
  return invalidRequest('payment_intent_unexpected_state', `This PaymentIntent's status is ${intent.status}.`);
}
