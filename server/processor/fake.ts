import { declineWords } from '../../shared/declines.js';
import { type TipSuggestions, tipSuggestions } from '../../shared/tipping.js';
import type { Mode } from '../db/schema.js';
import { invalid } from '../errors.js';
import { ProcessorFailure } from './errors.js';
import type {
  AccountLink,
  AccountLinkRequest,
  AccountRequest,
  BankAccountRequest,
  CartRequest,
  CustomerFields,
  DisputeEvidence,
  IntentCreation,
  IntentRequest,
  LocationRequest,
  PaymentProcessor,
  ProcessorScope,
  PayoutRequest,
  PresentedCard,
  ProcessConfig,
  ReaderRequest,
  RefundRequest,
  TippingRequest,
} from './port.js';
import {
  type AccountSnapshot,
  type BalanceSnapshot,
  type BankAccountSnapshot,
  type CustomerSnapshot,
  type DisputeSnapshot,
  NO_RECEIPT,
  type PaymentCancellationReason,
  type PaymentSnapshot,
  type PayoutSnapshot,
  type ProcessorEvent,
  type ReaderSnapshot,
  type RefundSnapshot,
} from './snapshots.js';

/** The processor's methods, by name, for scripting failures and reading the call log. */
export type ProcessorCall = Exclude<keyof PaymentProcessor, 'name' | 'kind' | 'modes' | 'publishableKey' | 'browserUrl'>;

/**
 * Stripe's declining test payment methods and the codes confirming with each answers; the message
 * is the counter's words for those codes (shared/declines.ts), the one table of what a decline means.
 */
const DECLINING_METHODS: Record<string, { code: string; declineCode?: string }> = {
  pm_card_chargeDeclined: { code: 'card_declined', declineCode: 'generic_decline' },
  pm_card_chargeDeclinedInsufficientFunds: { code: 'card_declined', declineCode: 'insufficient_funds' },
  pm_card_chargeDeclinedExpiredCard: { code: 'expired_card' },
};

/** Stripe's statuses from which a PaymentIntent can still be canceled. */
const CANCELABLE = new Set(['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action']);

/** What Stripe's test mode does with submitted evidence whose `uncategorized_text` says so. */
const EVIDENCE_OUTCOMES: Record<string, string> = { winning_evidence: 'won', losing_evidence: 'lost' };

/** Seven days to answer, as card networks commonly give (Stripe shows the network's date). */
const EVIDENCE_WINDOW_MS = 7 * 24 * 3600 * 1000;

/** Stripe's standard payouts to a US bank arrive two business days later. */
const PAYOUT_ARRIVAL_MS = 2 * 24 * 3600 * 1000;

/** What `retrieveAccount` reports of a connected account. */
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

const READY: FakeAccountState = {
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
};

/** A fake reader's screen, for tests to read as a customer would. */
export interface ReaderScreen {
  cart: CartRequest | null;
  config: ProcessConfig | null;
  tipping: TipSuggestions | null;
  /** The tip the customer chose on the tip screen, until the card is presented. */
  tip: number | null;
}

const BLANK_SCREEN: ReaderScreen = { cart: null, config: null, tipping: null, tip: null };

interface Intent {
  mode: Mode;
  snapshot: PaymentSnapshot;
  refunded: number;
  /** The processor's customer the payment is for. */
  customer: string | null;
}

interface Reader {
  mode: Mode;
  location: string;
  snapshot: ReaderSnapshot;
  /** What the reader shows: the cart set before the payment, and the payment's tip screen. */
  screen: ReaderScreen;
}

/**
 * An in-memory processor for unit tests of the domain: stateful like Stripe's test mode for the
 * calls the domain makes (idempotency keys honoured, state checks refused with Stripe's codes),
 * answering pos's snapshots, with failures scripted per call. Not a simulator: no events, no
 * timing, no wire format.
 */
export class InMemoryProcessor implements PaymentProcessor {
  readonly name = 'in-memory';
  readonly kind = 'simulator' as const;
  readonly modes = ['test', 'live'] as const;
  /** Every call made, in order, with its mode. */
  readonly calls: { call: ProcessorCall; mode: Mode | null }[] = [];
  /** Capability statuses by `account:capability`; anything unlisted is active. */
  readonly capabilities = new Map<string, string>();
  /** The status new refunds take (Stripe settles most card refunds at once). */
  refundStatus: 'succeeded' | 'pending' | 'failed' = 'succeeded';
  /** Account Links made, in order. */
  readonly accountLinks: ({ mode: Mode } & AccountLinkRequest)[] = [];
  /** The processor's clock (epoch ms), for the dates it stamps: tests set it to match theirs. */
  nowMs = Date.UTC(2026, 10, 23, 12);

  readonly #accounts = new Map<string, FakeAccountState>();
  readonly #intents = new Map<string, Intent>();
  readonly #refunds = new Map<string, RefundSnapshot & { paymentIntent: string }>();
  readonly #readers = new Map<string, Reader>();
  /** Tipping per Terminal Configuration, and the configuration each location is assigned. */
  readonly #configurations = new Map<string, TippingRequest | null>();
  readonly #locationConfigurations = new Map<string, string>();
  readonly #disputes = new Map<string, DisputeSnapshot & { mode: Mode; createdAt: number }>();
  readonly #payouts = new Map<string, PayoutSnapshot & { mode: Mode; account: string }>();
  /** Balances by `account:currency`. */
  readonly #balances = new Map<string, { available: number; pending: number }>();
  readonly #customers = new Map<string, CustomerSnapshot & { deleted: boolean }>();
  /** Bank accounts by connected account, the newest (the default) last. */
  readonly #banks = new Map<string, BankAccountSnapshot[]>();
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
    const intent = this.#intent(intentId).snapshot;
    intent.status = status;
    if (status === 'succeeded') intent.amountReceived = intent.amount;
  }

  /**
   * A cardholder disputes a paid PaymentIntent (what Stripe's dispute test cards make happen). A
   * formal dispute withdraws the amount at once; an inquiry (`warning_needs_response`) does not.
   */
  openDispute(intentId: string, options: { reason?: string; inquiry?: boolean } = {}): DisputeSnapshot {
    const intent = this.#intent(intentId);
    const dispute = {
      id: this.#id('dp'),
      mode: intent.mode,
      createdAt: this.nowMs,
      paymentIntentId: intentId,
      amount: intent.snapshot.amountReceived,
      currency: intent.snapshot.currency,
      reason: options.reason ?? (options.inquiry ? 'general' : 'fraudulent'),
      status: options.inquiry ? 'warning_needs_response' : 'needs_response',
      evidence: {},
      submissionCount: 0,
      dueBy: this.nowMs + EVIDENCE_WINDOW_MS,
      fundsWithdrawn: !options.inquiry,
      fundsReinstated: false,
    };
    this.#disputes.set(dispute.id, dispute);
    return copy(dispute);
  }

  /** Sets a connected account's balance in one currency. */
  setBalance(account: string, currency: string, balance: { available: number; pending: number }): void {
    this.#balances.set(`${account}:${currency}`, { ...balance });
  }

  /** The bank's answer to a payout (Stripe's test bank accounts decide it there). */
  settlePayout(id: string, status: 'in_transit' | 'paid' | 'failed' | 'canceled', failureCode?: string): PayoutSnapshot {
    const payout = this.#payouts.get(id);
    if (!payout) throw missing('payout', id);
    payout.status = status;
    payout.failureCode = status === 'failed' ? (failureCode ?? 'could_not_process') : null;
    payout.failureMessage = payout.failureCode ? 'The bank could not process this payout.' : null;
    return copy(payout);
  }

  /** A payout the processor made on its schedule (automatic payouts), with its available balance. */
  automaticPayout(mode: Mode, account: string, amount: number, currency: string): PayoutSnapshot {
    return this.#newPayout(mode, account, { amount, currency, automatic: true, description: 'STRIPE PAYOUT', metadata: {} });
  }

  /**
   * A connected account's standing, as Stripe would report it: ready to charge and pay out unless
   * a test says otherwise (an account still onboarding, one whose verification failed).
   */
  setAccountState(account: string, state: Partial<FakeAccountState>): void {
    this.#accounts.set(account, { ...(this.#accounts.get(account) ?? READY), ...state });
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
    const action = reader.snapshot.action;
    if (action?.status !== 'in_progress' || !reader.screen.config?.enableCustomerCancellation) throw new Error('the reader shows no cancel button');
    reader.snapshot.action = { ...action, status: 'failed', failureCode: 'customer_canceled' };
    reader.screen = BLANK_SCREEN;
  }

  /** The processor's copy of a customer as it stands, and whether it was deleted. */
  customer(id: string): { customer: CustomerSnapshot; deleted: boolean } | undefined {
    const found = this.#customers.get(id);
    if (!found) return undefined;
    const { deleted, ...customer } = copy(found);
    return { customer, deleted };
  }

  /** Test hook: the processor's customer a payment was made for. */
  customerOf(intentId: string): string | null {
    return this.#intent(intentId).customer;
  }

  publishableKey(mode: Mode): string | null {
    return `pk_${mode}_in_memory`;
  }

  browserUrl(): string | null {
    return null;
  }

  async ping(): Promise<void> {
    this.#enter('ping', null);
  }

  async createAccount({ mode }: ProcessorScope, _request: AccountRequest, idempotencyKey: string): Promise<AccountSnapshot> {
    this.#enter('createAccount', mode);
    const id = this.#once(idempotencyKey, () => this.#id('acct'));
    return this.#account(id);
  }

  async retrieveAccount({ mode }: ProcessorScope, account: string): Promise<AccountSnapshot> {
    this.#enter('retrieveAccount', mode);
    return this.#account(account);
  }

  async createAccountLink({ mode }: ProcessorScope, request: AccountLinkRequest): Promise<AccountLink> {
    this.#enter('createAccountLink', mode);
    this.accountLinks.push({ mode, ...request });
    return { url: `https://connect.fake.test/setup/${this.#id('al')}`, expiresAt: this.nowMs + 300_000 };
  }

  async capabilityStatus({ mode }: ProcessorScope, account: string, capability: string): Promise<string> {
    this.#enter('capabilityStatus', mode);
    return this.capabilities.get(`${account}:${capability}`) ?? 'active';
  }

  async createIntent({ mode }: ProcessorScope, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation> {
    this.#enter('createIntent', mode);
    return this.#once(idempotencyKey, () => {
      const id = this.#id('pi');
      const snapshot: PaymentSnapshot = {
        id,
        status: 'requires_payment_method',
        amount: request.amount,
        amountReceived: 0,
        tip: 0,
        currency: request.currency,
        clientSecret: `${id}_secret_${this.#next}`,
        metadata: { ...request.metadata },
        failureCode: null,
        declineCode: null,
        failureMessage: null,
        card: null,
        receipt: NO_RECEIPT,
        cancellationReason: null,
      };
      this.#intents.set(id, { mode, snapshot, refunded: 0, customer: request.customer ?? null });
      if (request.confirm && request.paymentMethod) {
        if (request.methods.includes('us_bank_account')) {
          snapshot.status = 'processing';
        } else {
          const decline = DECLINING_METHODS[request.paymentMethod];
          if (decline) {
            const message = declineWords({ decline_code: decline.declineCode ?? null, failure_code: decline.code });
            Object.assign(snapshot, { failureCode: decline.code, declineCode: decline.declineCode ?? null, failureMessage: message });
            const failure = new ProcessorFailure('card', message, { status: 402, code: decline.code, ...(decline.declineCode ? { declineCode: decline.declineCode } : {}), paymentIntent: id });
            return { intent: copy(snapshot), decline: failure };
          }
          snapshot.card = { brand: 'visa', last4: '4242' };
          snapshot.status = request.captureMethod === 'manual' ? 'requires_capture' : 'succeeded';
          if (snapshot.status === 'succeeded') snapshot.amountReceived = snapshot.amount;
        }
      }
      return { intent: copy(snapshot) };
    });
  }

  async retrieveIntent({ mode }: ProcessorScope, id: string): Promise<PaymentSnapshot> {
    this.#enter('retrieveIntent', mode);
    return copy(this.#intent(id).snapshot);
  }

  async captureIntent({ mode }: ProcessorScope, id: string, amount: number | undefined, idempotencyKey: string): Promise<PaymentSnapshot> {
    this.#enter('captureIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id).snapshot;
      if (intent.status !== 'requires_capture') throw unexpectedState(intent);
      intent.status = 'succeeded';
      intent.amountReceived = amount ?? intent.amount;
      return copy(intent);
    });
  }

  async cancelIntent({ mode }: ProcessorScope, id: string, reason: PaymentCancellationReason | undefined, idempotencyKey: string): Promise<PaymentSnapshot> {
    this.#enter('cancelIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id).snapshot;
      if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent);
      intent.status = 'canceled';
      intent.cancellationReason = reason ?? null;
      return copy(intent);
    });
  }

  async createRefund({ mode }: ProcessorScope, request: RefundRequest, idempotencyKey: string): Promise<RefundSnapshot> {
    this.#enter('createRefund', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(request.paymentIntent);
      const unrefunded = intent.snapshot.amountReceived - intent.refunded;
      if (intent.snapshot.status !== 'succeeded') throw invalidRequest('charge_not_refundable', 'This PaymentIntent has no successful charge to refund.');
      if (request.amount > unrefunded) throw invalidRequest('amount_too_large', `Refund amount (${request.amount}) is greater than unrefunded amount on charge (${unrefunded})`, 'amount');
      if (this.refundStatus !== 'failed') intent.refunded += request.amount;
      const refund = { id: this.#id('re'), paymentIntent: intent.snapshot.id, status: this.refundStatus, failureReason: this.refundStatus === 'failed' ? 'unknown' : null, metadata: { ...request.metadata } };
      this.#refunds.set(refund.id, refund);
      return refundOf(refund);
    });
  }

  async retrieveRefund({ mode }: ProcessorScope, id: string): Promise<RefundSnapshot> {
    this.#enter('retrieveRefund', mode);
    const refund = this.#refunds.get(id);
    if (!refund) throw missing('refund', id);
    return refundOf(refund);
  }

  async listRefunds({ mode }: ProcessorScope, paymentIntent: string): Promise<RefundSnapshot[]> {
    this.#enter('listRefunds', mode);
    return [...this.#refunds.values()].filter((r) => r.paymentIntent === paymentIntent).map(refundOf);
  }

  async createLocation({ mode }: ProcessorScope, _request: LocationRequest, idempotencyKey: string): Promise<{ id: string }> {
    this.#enter('createLocation', mode);
    return this.#once(idempotencyKey, () => ({ id: this.#id('tml') }));
  }

  async registerReader({ mode }: ProcessorScope, request: ReaderRequest, idempotencyKey: string): Promise<ReaderSnapshot> {
    this.#enter('registerReader', mode);
    return this.#once(idempotencyKey, () => {
      if (request.registrationCode !== 'simulated-wpe') throw invalidRequest('invalid_registration_code', 'The registration code is not valid', 'registration_code');
      const id = this.#id('tmr');
      const snapshot: ReaderSnapshot = { id, serialNumber: `SN-${id}`, deviceType: 'simulated_wisepos_e', status: 'online', lastSeenAt: null, action: null };
      this.#readers.set(id, { mode, location: request.location, snapshot, screen: BLANK_SCREEN });
      return copy(snapshot);
    });
  }

  async listReaders({ mode }: ProcessorScope, location?: string): Promise<ReaderSnapshot[]> {
    this.#enter('listReaders', mode);
    return [...this.#readers.values()].filter((r) => r.mode === mode && (!location || r.location === location)).map((r) => copy(r.snapshot));
  }

  async retrieveReader({ mode }: ProcessorScope, id: string): Promise<ReaderSnapshot | null> {
    this.#enter('retrieveReader', mode);
    const reader = this.#readers.get(id);
    return reader ? copy(reader.snapshot) : null;
  }

  async deleteReader({ mode }: ProcessorScope, id: string): Promise<void> {
    this.#enter('deleteReader', mode);
    if (!this.#readers.delete(id)) throw missing('terminal.reader', id);
  }

  async configureLocationTipping({ mode }: ProcessorScope, location: string, configuration: string | null, tipping: TippingRequest | null, idempotencyKey: string): Promise<string> {
    this.#enter('configureLocationTipping', mode);
    return this.#once(idempotencyKey, () => {
      const id = configuration ?? this.#id('tmc');
      this.#configurations.set(id, tipping ? { ...tipping } : null);
      this.#locationConfigurations.set(location, id);
      return id;
    });
  }

  async processPaymentIntent({ mode }: ProcessorScope, readerId: string, paymentIntent: string, config?: ProcessConfig): Promise<ReaderSnapshot> {
    this.#enter('processPaymentIntent', mode);
    const reader = this.#reader(readerId);
    if (reader.snapshot.action?.status === 'in_progress') throw invalidRequest('terminal_reader_busy', 'The reader is busy with another action');
    const intent = this.#intent(paymentIntent).snapshot;
    reader.snapshot.action = { type: 'process_payment_intent', status: 'in_progress', paymentIntentId: paymentIntent, authorising: false, failureCode: null, failureMessage: null };
    const configId = this.#locationConfigurations.get(reader.location);
    const tipping = configId ? this.#configurations.get(configId) : null;
    const eligible = config?.tipEligibleAmount ?? intent.amount;
    const suggestions =
      tipping && tipping.currency === intent.currency && !config?.skipTipping && eligible > 0
        ? tipSuggestions({ percentages: tipping.percentages, fixed_amounts: tipping.fixedAmounts, smart_tip_threshold: tipping.smartTipThreshold }, eligible, intent.currency)
        : null;
    reader.screen = { cart: reader.screen.cart, config: config ?? null, tipping: suggestions, tip: null };
    return copy(reader.snapshot);
  }

  async setReaderDisplay({ mode }: ProcessorScope, readerId: string, cart: CartRequest): Promise<ReaderSnapshot> {
    this.#enter('setReaderDisplay', mode);
    const reader = this.#reader(readerId);
    if (reader.snapshot.action?.status === 'in_progress') throw invalidRequest('terminal_reader_busy', 'The reader is busy with another action');
    reader.screen = { ...BLANK_SCREEN, cart: copy(cart) };
    return copy(reader.snapshot);
  }

  async cancelReaderAction({ mode }: ProcessorScope, readerId: string): Promise<void> {
    this.#enter('cancelReaderAction', mode);
    const reader = this.#reader(readerId);
    const action = reader.snapshot.action;
    if (action?.status === 'in_progress' && this.#intent(action.paymentIntentId ?? '').snapshot.status === 'processing') {
      throw invalidRequest('terminal_reader_busy', 'The reader is authorising a card');
    }
    reader.snapshot.action = null;
    reader.screen = BLANK_SCREEN;
  }

  async presentPaymentMethod({ mode }: ProcessorScope, readerId: string, card: PresentedCard): Promise<ReaderSnapshot> {
    this.#enter('presentPaymentMethod', mode);
    const reader = this.#reader(readerId);
    const action = reader.snapshot.action;
    if (action?.status !== 'in_progress') throw invalidRequest('terminal_reader_invalid_state', 'The reader has no action in progress');
    const intent = this.#intent(action.paymentIntentId ?? '').snapshot;
    intent.tip = card.amountTip ?? reader.screen.tip ?? 0;
    reader.screen = BLANK_SCREEN;
    intent.amount += intent.tip;
    intent.card = { brand: 'visa', last4: (card.cardNumber ?? '4242424242424242').slice(-4) };
    intent.status = 'succeeded';
    intent.amountReceived = intent.amount;
    reader.snapshot.action = { ...action, status: 'succeeded' };
    return copy(reader.snapshot);
  }

  async listDisputes({ mode }: ProcessorScope, filter: { paymentIntent?: string; createdSince?: number }): Promise<DisputeSnapshot[]> {
    this.#enter('listDisputes', mode);
    return [...this.#disputes.values()]
      .filter((d) => d.mode === mode && (!filter.paymentIntent || d.paymentIntentId === filter.paymentIntent) && (filter.createdSince === undefined || d.createdAt >= filter.createdSince))
      .map(disputeOf);
  }

  async retrieveDispute({ mode }: ProcessorScope, id: string): Promise<DisputeSnapshot> {
    this.#enter('retrieveDispute', mode);
    return disputeOf(this.#dispute(id));
  }

  async updateDispute({ mode }: ProcessorScope, id: string, update: DisputeEvidence, idempotencyKey: string): Promise<DisputeSnapshot> {
    this.#enter('updateDispute', mode);
    return this.#once(idempotencyKey, () => {
      const dispute = this.#dispute(id);
      if (!['needs_response', 'warning_needs_response'].includes(dispute.status)) throw invalidRequest('dispute_not_open', `This dispute is ${dispute.status} and can no longer take evidence.`);
      Object.assign(dispute.evidence, update.evidence);
      if (update.submit) {
        dispute.submissionCount += 1;
        const outcome = EVIDENCE_OUTCOMES[dispute.evidence.uncategorized_text ?? ''];
        if (dispute.status === 'warning_needs_response') dispute.status = outcome ? 'warning_closed' : 'warning_under_review';
        else dispute.status = outcome ?? 'under_review';
        if (dispute.status === 'won') dispute.fundsReinstated = true;
      }
      return disputeOf(dispute);
    });
  }

  async closeDispute({ mode }: ProcessorScope, id: string, idempotencyKey: string): Promise<DisputeSnapshot> {
    this.#enter('closeDispute', mode);
    return this.#once(idempotencyKey, () => {
      const dispute = this.#dispute(id);
      if (!['needs_response', 'warning_needs_response'].includes(dispute.status)) throw invalidRequest('dispute_not_open', `This dispute is ${dispute.status} and cannot be closed.`);
      dispute.status = dispute.status === 'warning_needs_response' ? 'warning_closed' : 'lost';
      return disputeOf(dispute);
    });
  }

  async retrieveBalance({ mode }: ProcessorScope, account: string): Promise<BalanceSnapshot> {
    this.#enter('retrieveBalance', mode);
    const entries = [...this.#balances.entries()].filter(([key]) => key.startsWith(`${account}:`));
    const side = (which: 'available' | 'pending') => entries.map(([key, b]) => ({ amount: b[which], currency: key.slice(account.length + 1) }));
    return { available: side('available'), pending: side('pending') };
  }

  async createPayout({ mode }: ProcessorScope, request: PayoutRequest, idempotencyKey: string): Promise<PayoutSnapshot> {
    this.#enter('createPayout', mode);
    return this.#once(idempotencyKey, () => {
      const balance = this.#balances.get(`${request.account}:${request.currency}`);
      if (!balance || balance.available < request.amount) {
        throw invalidRequest('balance_insufficient', 'You have insufficient funds in your Stripe account for this transfer.', 'amount');
      }
      balance.available -= request.amount;
      return this.#newPayout(mode, request.account, { amount: request.amount, currency: request.currency, automatic: false, description: request.description ?? null, metadata: { ...request.metadata } });
    });
  }

  async retrievePayout({ mode }: ProcessorScope, account: string, id: string): Promise<PayoutSnapshot> {
    this.#enter('retrievePayout', mode);
    const payout = this.#payouts.get(id);
    if (!payout || payout.account !== account) throw missing('payout', id);
    return payoutOf(payout);
  }

  async addBankAccount({ mode }: ProcessorScope, request: BankAccountRequest, idempotencyKey: string): Promise<BankAccountSnapshot> {
    this.#enter('addBankAccount', mode);
    return this.#once(idempotencyKey, () => {
      if (!/^\d{4,17}$/.test(request.accountNumber)) throw invalidRequest('account_number_invalid', 'The account number is not valid', 'account_number');
      const banks = (this.#banks.get(request.account) ?? []).map((b) => ({ ...b, defaultForCurrency: b.currency === request.currency ? false : b.defaultForCurrency }));
      const bank: BankAccountSnapshot = {
        id: this.#id('ba'),
        bankName: 'STRIPE TEST BANK',
        last4: request.accountNumber.slice(-4),
        routingNumber: request.routingNumber ?? null,
        country: request.country,
        currency: request.currency,
        holderName: request.holderName ?? null,
        status: 'new',
        defaultForCurrency: true,
      };
      this.#banks.set(request.account, [...banks, bank]);
      return { ...bank };
    });
  }

  async listBankAccounts({ mode }: ProcessorScope, account: string): Promise<BankAccountSnapshot[]> {
    this.#enter('listBankAccounts', mode);
    return (this.#banks.get(account) ?? []).map((b) => ({ ...b }));
  }

  async createCustomer({ mode }: ProcessorScope, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot> {
    this.#enter('createCustomer', mode);
    return this.#once(idempotencyKey, () => {
      const customer = { id: this.#id('cus'), name: null, email: null, phone: null, description: null, metadata: {}, deleted: false };
      this.#customers.set(customer.id, customer);
      return applyCustomer(customer, fields);
    });
  }

  async updateCustomer({ mode }: ProcessorScope, id: string, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot> {
    this.#enter('updateCustomer', mode);
    return this.#once(idempotencyKey, () => {
      const customer = this.#customers.get(id);
      if (!customer || customer.deleted) throw missing('customer', id);
      return applyCustomer(customer, fields);
    });
  }

  async deleteCustomer({ mode }: ProcessorScope, id: string): Promise<void> {
    this.#enter('deleteCustomer', mode);
    const customer = this.#customers.get(id);
    if (customer) customer.deleted = true;
  }

  async registerWebhookEndpoint(): Promise<void> {
    this.#enter('registerWebhookEndpoint', null);
  }

  /** Accepts a body signed `valid` (a pos event, as JSON); anything else is refused as a forged event would be. */
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

  #account(id: string): AccountSnapshot {
    const state = this.#accounts.get(id) ?? READY;
    return {
      id,
      type: state.type,
      chargesEnabled: state.chargesEnabled,
      payoutsEnabled: state.payoutsEnabled,
      detailsSubmitted: state.detailsSubmitted,
      requirements: {
        currently_due: [...state.currentlyDue],
        past_due: [...state.pastDue],
        eventually_due: [...state.currentlyDue],
        pending_verification: [...state.pendingVerification],
        current_deadline: state.currentDeadline,
        disabled_reason: state.disabledReason,
        errors: state.errors.map((e) => ({ ...e })),
      },
    };
  }

  #intent(id: string): Intent {
    const intent = this.#intents.get(id);
    if (!intent) throw missing('payment_intent', id);
    return intent;
  }

  #dispute(id: string): DisputeSnapshot & { mode: Mode; createdAt: number } {
    const dispute = this.#disputes.get(id);
    if (!dispute) throw missing('dispute', id);
    return dispute;
  }

  #reader(id: string): Reader {
    const reader = this.#readers.get(id);
    if (!reader) throw missing('terminal.reader', id);
    return reader;
  }

  #newPayout(mode: Mode, account: string, fields: Pick<PayoutSnapshot, 'amount' | 'currency' | 'automatic' | 'description' | 'metadata'>): PayoutSnapshot {
    const payout = { id: this.#id('po'), mode, account, ...fields, status: 'pending', arrivalDate: this.nowMs + PAYOUT_ARRIVAL_MS, failureCode: null, failureMessage: null };
    this.#payouts.set(payout.id, payout);
    return payoutOf(payout);
  }
}

/** A deep copy: what a caller gets never aliases the fake's state. */
function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

function refundOf({ paymentIntent: _, ...refund }: RefundSnapshot & { paymentIntent: string }): RefundSnapshot {
  return copy(refund);
}

function disputeOf({ mode: _, createdAt: __, ...dispute }: DisputeSnapshot & { mode: Mode; createdAt: number }): DisputeSnapshot {
  return copy(dispute);
}

function payoutOf({ mode: _, account: __, ...payout }: PayoutSnapshot & { mode: Mode; account: string }): PayoutSnapshot {
  return copy(payout);
}

/** On an update, an absent field is left as it is, null clears it, and metadata keys merge (an empty value removes a key), as on Stripe. */
function applyCustomer(customer: CustomerSnapshot & { deleted: boolean }, fields: CustomerFields): CustomerSnapshot {
  for (const key of ['name', 'email', 'phone', 'description'] as const) if (fields[key] !== undefined) customer[key] = fields[key];
  for (const [key, value] of Object.entries(fields.metadata ?? {})) {
    if (value === '') delete customer.metadata[key];
    else customer.metadata[key] = value;
  }
  const { deleted: _, ...snapshot } = customer;
  return copy(snapshot);
}

function invalidRequest(code: string, message: string, param?: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', message, { status: 400, code, ...(param ? { param } : {}) });
}

function missing(object: string, id: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', `No such ${object}: '${id}'`, { status: 404, code: 'resource_missing', param: 'id' });
}

function unexpectedState(intent: PaymentSnapshot): ProcessorFailure {
  return invalidRequest('payment_intent_unexpected_state', `This PaymentIntent's status is ${intent.status}.`);
}
