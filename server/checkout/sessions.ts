import type { Logger } from 'pino';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoOrNull, toIsoTimestamp } from '../../shared/time.js';
import type { Clock } from '../../shared/time.js';
import type { CheckoutSessionsTable, TransactionsTable } from '../db/schema.js';
import { findScoped } from '../db/prepared.js';
import type { Store } from '../db/store.js';
import { ApiError, conflict, gone, invalid, notFound } from '../errors.js';
import type { CheckoutSession, CreateCheckoutSessionInput, PageDetails } from '../../shared/contract/checkout.js';
import type { Scope } from '../accounts/scope.js';
import type { TransactionService } from '../payments/transactions.js';
import type { FieldCipher } from '../db/encryption.js';

/** The public base URL pages are served under (config `publicUrl`, default the server's own URL). */
export type PublicUrl = () => string;

/** Sessions expired (and their payments canceled) per sweep: bounded so a backlog never holds the database long. */
const EXPIRE_BATCH = 100;

export interface Collect {
  email: boolean;
  name: boolean;
  phone: boolean;
  address: boolean;
}

/** What a hosted page needs to confirm a payment in the browser. */
export interface PaymentStart {
  client_secret: string;
  payment_intent: string;
  /** The transaction reference; a payment-link page sends it back to retry on the same payment. */
  transaction: string;
}

export function sessionUrl(base: string, reference: string): string {
  return `${base.replace(/\/+$/, '')}/checkout/${reference}`;
}

/** The page asks for the fields the session collects; each one it asks for is required. */
export function requireCollected(collect: Collect, details: PageDetails): void {
  if (collect.email && !details.email) throw invalid('email', 'Enter your email address', 'parameter_missing');
  if (collect.name && !details.name) throw invalid('name', 'Enter your name', 'parameter_missing');
  if (collect.phone && !details.phone) throw invalid('phone', 'Enter your phone number', 'parameter_missing');
  if (collect.address && !details.address) throw invalid('address', 'Enter your address', 'parameter_missing');
}

export function collectOf(row: CheckoutSessionsTable): Collect {
  return JSON.parse(row.collect) as Collect;
}

/**
 * What the session's page asks for: what it collects, and the email whenever the merchant gave a
 * `customer_email` too (prefilled, so the customer can check where the receipt goes).
 */
export function pageCollectOf(row: CheckoutSessionsTable): Collect {
  const collect = collectOf(row);
  return { ...collect, email: collect.email || row.customer_email !== null };
}

/**
 * Hosted checkout sessions (spec §2.2, §4.5). A session owns one payment, created with it; the
 * page confirms that payment in the browser, the processor's outcome moves it, and the payment
 * state machine completes the session (state.ts). Open sessions expire at `expires_at`:
 * checked when read and by the reconciler's sweep, which also cancels the unpaid PaymentIntent.
 */
export class CheckoutService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly transactions: TransactionService,
    private readonly logger: Logger,
    private readonly publicUrl: PublicUrl,
    private readonly cipher: FieldCipher,
  ) {}

  async create(scope: Scope, input: CreateCheckoutSessionInput): Promise<CheckoutSession> {
    const { id, reference } = newIdentity('checkoutSession');
    // Sessions are not idempotent (spec §8), so the payment gets an internal key of its own.
    const payment = await this.transactions.createFor(
      scope,
      {
        input: {
          amount: input.amount,
          ...(input.currency ? { currency: input.currency } : {}),
          payment_method_type: 'card',
          confirm: false,
          capture_method: 'automatic',
          ...(input.description ? { description: input.description } : {}),
          ...(input.customer_email ? { receipt_email: input.customer_email } : {}),
          ...(input.metadata ? { metadata: input.metadata } : {}),
        },
        source: 'checkout',
        terminalId: null,
        checkoutSessionId: id,
        response: 'transaction',
      },
    );
    const now = this.clock.now();
    const row: CheckoutSessionsTable = {
      id,
      reference,
      merchant_id: scope.merchantId,
      mode: scope.mode,
      status: 'open',
      amount: input.amount,
      currency: payment.currency,
      description: input.description ?? null,
      customer_email: this.cipher.seal('checkout_sessions.customer_email', id, input.customer_email ?? null),
      customer_name: this.cipher.seal('checkout_sessions.customer_name', id, input.customer_name ?? null),
      success_url: input.success_url ?? null,
      cancel_url: input.cancel_url ?? null,
      payment_method_types: JSON.stringify(input.payment_method_types),
      collect: JSON.stringify({ email: input.collect_email, name: input.collect_name, phone: input.collect_phone, address: input.collect_address } satisfies Collect),
      customer_details: null,
      metadata: JSON.stringify(input.metadata ?? {}),
      transaction_id: payment.id,
      expires_at: now + input.expires_in * 1000,
      completed_at: null,
      expired_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.store.db.insertInto('checkout_sessions').values(row).execute();
    return this.present(row);
  }

  async get(scope: Scope, idOrReference: string): Promise<CheckoutSession> {
    const row = await findScoped(this.store.db, 'checkout_sessions', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
    if (!row) throw notFound('id', 'checkout session');
    return this.present(await this.#settle(row));
  }

  /** The session behind a page URL, expired first if its time is up; undefined when there is none. */
  async findByReference(reference: string): Promise<CheckoutSessionsTable | undefined> {
    const row = await this.store.db.selectFrom('checkout_sessions').selectAll().where('reference', '=', reference).executeTakeFirst();
    return row ? this.#settle(row) : undefined;
  }

  /** The page is about to confirm: checks the session can still be paid, keeps what the customer typed. */
  async startPayment(reference: string, details: PageDetails): Promise<PaymentStart> {
    const row = await this.findByReference(reference);
    if (!row) throw notFound('reference', 'checkout session');
    if (row.status === 'expired') throw gone('checkout_session_expired', 'This checkout session has expired');
    if (row.status === 'complete') throw conflict('checkout_session_complete', 'This checkout session is already paid');
    requireCollected(pageCollectOf(row), details);
    const payment = await this.store.db.selectFrom('transactions').selectAll().where('id', '=', row.transaction_id).executeTakeFirstOrThrow();
    if (payment.status === 'canceled') throw gone('checkout_session_expired', 'This checkout session can no longer be paid');
    if (!payment.client_secret || !payment.processor_payment_intent_id) throw conflict('transaction_being_created', 'The payment is still being created; retry in a moment');
    const now = this.clock.now();
    await this.store.db
      .updateTable('checkout_sessions')
      .set({
        customer_details: this.cipher.seal(
          'checkout_sessions.customer_details',
          row.id,
          JSON.stringify({ email: details.email ?? null, name: details.name ?? null, phone: details.phone ?? null, address: details.address ?? null }),
        ),
        updated_at: now,
      })
      .where('id', '=', row.id)
      .execute();
    return { client_secret: payment.client_secret, payment_intent: payment.processor_payment_intent_id, transaction: payment.reference };
  }

  /** One pass of the sweep: expires sessions whose time is up and cancels payments they left open. */
  async expireDue(): Promise<number> {
    const now = this.clock.now();
    const due = await this.store.db
      .selectFrom('checkout_sessions')
      .selectAll()
      .where('status', '=', 'open')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(EXPIRE_BATCH)
      .execute();
    for (const row of due) await this.#settle(row);
    // A cancel the processor refused earlier (it was unreachable) is tried again here.
    const leftOpen = await this.store.db
      .selectFrom('checkout_sessions')
      .innerJoin('transactions', 'transactions.id', 'checkout_sessions.transaction_id')
      .select(['checkout_sessions.merchant_id', 'checkout_sessions.mode', 'checkout_sessions.transaction_id'])
      .where('checkout_sessions.status', '=', 'expired')
      .where('transactions.status', 'in', ['pending', 'failed'])
      .limit(EXPIRE_BATCH)
      .execute();
    for (const open of leftOpen) await this.#cancelPayment({ merchantId: open.merchant_id, mode: open.mode }, open.transaction_id);
    return due.length;
  }

  /** Moves an open session past its expiry to expired, then cancels its unpaid payment. */
  async #settle(row: CheckoutSessionsTable): Promise<CheckoutSessionsTable> {
    const now = this.clock.now();
    if (row.status !== 'open' || row.expires_at > now) return row;
    // Expired first, so the page refuses at once; a payment that still gets through completes it.
    await this.store.db
      .updateTable('checkout_sessions')
      .set({ status: 'expired', expired_at: now, updated_at: now })
      .where('id', '=', row.id)
      .where('status', '=', 'open')
      .execute();
    await this.#cancelPayment({ merchantId: row.merchant_id, mode: row.mode }, row.transaction_id);
    return this.store.db.selectFrom('checkout_sessions').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  }

  async #cancelPayment(scope: Scope, transactionId: string): Promise<TransactionsTable | undefined> {
    try {
      return (await this.transactions.cancel(scope, transactionId, 'abandoned')).row;
    } catch (err) {
      // already_captured: the customer paid in time and the session is complete; anything else is
      // retried by the next sweep.
      if (!(err instanceof ApiError && err.code === 'already_captured')) this.logger.warn({ err, transaction_id: transactionId }, 'canceling an expired checkout payment failed');
      return undefined;
    }
  }

  /** What the page fills in for the customer: the email and name the merchant gave. */
  prefillOf(row: CheckoutSessionsTable): { email: string | null; name: string | null } {
    return { email: this.cipher.open('checkout_sessions.customer_email', row.id, row.customer_email), name: this.cipher.open('checkout_sessions.customer_name', row.id, row.customer_name) };
  }

  present(row: CheckoutSessionsTable): CheckoutSession {
    const collect = collectOf(row);
    const prefill = this.prefillOf(row);
    const details = this.cipher.open('checkout_sessions.customer_details', row.id, row.customer_details);
    return {
      id: row.id,
      object: 'checkout.session',
      reference: row.reference,
      url: sessionUrl(this.publicUrl(), row.reference),
      amount: row.amount,
      currency: row.currency,
      status: row.status,
      expires_at: toIsoTimestamp(row.expires_at),
      transaction_id: row.transaction_id,
      description: row.description,
      customer_email: prefill.email,
      customer_name: prefill.name,
      success_url: row.success_url,
      cancel_url: row.cancel_url,
      payment_method_types: JSON.parse(row.payment_method_types) as CheckoutSession['payment_method_types'],
      collect_email: collect.email,
      collect_name: collect.name,
      collect_phone: collect.phone,
      collect_address: collect.address,
      customer_details: details ? (JSON.parse(details) as CheckoutSession['customer_details']) : null,
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      is_test: row.mode === 'test',
      created_at: toIsoTimestamp(row.created_at),
      completed_at: toIsoOrNull(row.completed_at),
      expired_at: toIsoOrNull(row.expired_at),
    };
  }
}
