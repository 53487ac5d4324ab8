import type { Logger } from 'pino';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { formatAmount, minimumCharge } from '../../shared/money.js';
import { toIsoOrNull, toIsoTimestamp } from '../../shared/time.js';
import type { Clock } from '../../shared/time.js';
import type { PaymentLinksTable } from '../db/schema.js';
import { findScoped } from '../db/prepared.js';
import type { Store } from '../db/store.js';
import { ApiError, conflict, gone, invalid, notFound } from '../errors.js';
import type { CreatePaymentLinkInput, PageDetails, PaymentLink } from '../../shared/contract/checkout.js';
import { type PaymentStart, type PublicUrl } from './sessions.js';
import type { ExecuteResult, IdempotencyService, Operation } from '../idempotency/keys.js';
import type { Scope } from '../accounts/scope.js';
import type { TransactionService } from '../payments/transactions.js';
import type { FieldCipher } from '../db/encryption.js';

interface CreateLinkState {
  input: CreatePaymentLinkInput;
}

/** What a payment link create came to: the link made. */
export interface CreateLinkOutcome {
  link: PaymentLinksTable;
}

/** Open payments canceled when a link is deactivated, per request: bounded so DELETE stays quick. */
const CANCEL_ON_DEACTIVATE = 100;

export function linkUrl(base: string, reference: string): string {
  return `${base.replace(/\/+$/, '')}/pay/${reference}`;
}

/**
 * Payment links (spec §2.3, §4.6): a reusable page for a fixed amount. Each payment through it is
 * its own transaction (source `payment_link`), made when a customer submits the page, not when
 * someone merely opens it (link previews and crawlers open pages too).
 */
export class PaymentLinkService {
  readonly createOperation: Operation<CreateLinkState, CreateLinkOutcome>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly transactions: TransactionService,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
    private readonly publicUrl: PublicUrl,
    private readonly cipher: FieldCipher,
  ) {
    this.createOperation = {
      name: 'create_payment_link',
      // One atomic step: the link and the stored answer commit together.
      steps: { started: (state, ctx) => ctx.commit(async (trx) => ({ outcome: { link: await this.#insert(trx, ctx.scope, state.input) } })) },
      // The presenter of `POST /v1/payment_links`: the answer its idempotency key keeps.
      present: (outcome) => ({ status: 201, body: { data: this.present(outcome.link) } }),
      // The request and its answer name the customer's email: kept sealed.
      personal: (state) => state.input.customer_email !== undefined,
    };
  }

  async create(scope: Scope, input: CreatePaymentLinkInput, clientKey: string | undefined): Promise<ExecuteResult<CreateLinkState, CreateLinkOutcome>> {
    return this.idempotency.execute(scope, this.createOperation, clientKey, { input });
  }

  async #insert(trx: Parameters<Parameters<Store['transaction']>[0]>[0], scope: Scope, input: CreatePaymentLinkInput): Promise<PaymentLinksTable> {
    const merchant = await trx.selectFrom('merchants').select('default_currency').where('id', '=', scope.merchantId).executeTakeFirstOrThrow();
    const currency = input.currency ?? merchant.default_currency;
    const minimum = minimumCharge(currency);
    if (input.amount < minimum) throw invalid('amount', `The minimum ${currency.toUpperCase()} payment is ${formatAmount(minimum, currency)} (${minimum} in minor units)`, 'amount_too_small');
    const now = this.clock.now();
    const { id, reference } = newIdentity('paymentLink');
    const row: PaymentLinksTable = {
      id,
      reference,
      merchant_id: scope.merchantId,
      mode: scope.mode,
      status: 'open',
      amount: input.amount,
      currency,
      description: input.description ?? null,
      customer_email: this.cipher.seal('payment_links.customer_email', id, input.customer_email ?? null),
      success_url: input.success_url ?? null,
      cancel_url: input.cancel_url ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      expires_at: now + input.expires_in * 1000,
      deactivated_at: null,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('payment_links').values(row).execute();
    return row;
  }

  async getRow(scope: Scope, idOrReference: string): Promise<PaymentLinksTable> {
    const row = await findScoped(this.store.db, 'payment_links', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
    if (!row) throw notFound('id', 'payment link');
    return row;
  }

  async get(scope: Scope, idOrReference: string): Promise<PaymentLink> {
    return this.present(await this.getRow(scope, idOrReference));
  }

  /** Newest first; `starting_after` continues after a link of the previous page (Stripe's cursor). */
  async list(scope: Scope, limit: number, startingAfter: string | undefined): Promise<{ object: 'list'; data: PaymentLink[]; has_more: boolean }> {
    let query = this.store.db.selectFrom('payment_links').selectAll().where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode);
    if (startingAfter !== undefined) {
      const cursor = await this.getRow(scope, startingAfter).catch(() => {
        throw invalid('starting_after', 'No such payment link', 'resource_missing');
      });
      query = query.where((eb) =>
        eb.or([eb('created_at', '<', cursor.created_at), eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)])]),
      );
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
    return { object: 'list', data: rows.slice(0, limit).map((r) => this.present(r)), has_more: rows.length > limit };
  }

  /**
   * Deactivates the link (safe to repeat): its page refuses payment from now on, and payments
   * started on it and not paid are canceled so an open page cannot still complete one.
   */
  async deactivate(scope: Scope, idOrReference: string): Promise<PaymentLink> {
    const row = await this.getRow(scope, idOrReference);
    if (row.status === 'open') {
      const now = this.clock.now();
      await this.store.db
        .updateTable('payment_links')
        .set({ status: 'deactivated', deactivated_at: now, updated_at: now })
        .where('id', '=', row.id)
        .where('status', '=', 'open')
        .execute();
    }
    const open = await this.store.db
      .selectFrom('transactions')
      .select('id')
      .where('link_id', '=', row.id)
      .where('status', 'in', ['pending', 'failed'])
      .limit(CANCEL_ON_DEACTIVATE)
      .execute();
    for (const payment of open) {
      try {
        await this.transactions.cancel(scope, payment.id, 'abandoned');
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 'already_captured')) this.logger.warn({ err, transaction_id: payment.id }, 'canceling a payment of a deactivated link failed');
      }
    }
    return this.present(await this.getRow(scope, row.id));
  }

  async findByReference(reference: string): Promise<PaymentLinksTable | undefined> {
    return this.store.db.selectFrom('payment_links').selectAll().where('reference', '=', reference).executeTakeFirst();
  }

  /** Whether the page may take a payment now: open and not past its expiry. */
  payable(row: PaymentLinksTable): boolean {
    return row.status === 'open' && row.expires_at > this.clock.now();
  }

  /**
   * The page is about to confirm. The first submit of a page view creates the payment; a retry
   * after a decline names it and confirms the same PaymentIntent again.
   */
  async startPayment(reference: string, details: PageDetails): Promise<PaymentStart> {
    const link = await this.findByReference(reference);
    if (!link) throw notFound('reference', 'payment link');
    if (!this.payable(link)) throw gone(link.status === 'deactivated' ? 'payment_link_deactivated' : 'payment_link_expired', 'This payment link is no longer active');
    if (!details.email) throw invalid('email', 'Enter your email address', 'parameter_missing');
    const scope: Scope = { merchantId: link.merchant_id, mode: link.mode };
    if (details.transaction) {
      const earlier = await this.store.db
        .selectFrom('transactions')
        .selectAll()
        .where('reference', '=', details.transaction)
        .where('link_id', '=', link.id)
        .where('status', 'in', ['pending', 'failed'])
        .executeTakeFirst();
      if (earlier?.client_secret && earlier.processor_payment_intent_id) {
        return { client_secret: earlier.client_secret, payment_intent: earlier.processor_payment_intent_id, transaction: earlier.reference };
      }
    }
    const payment = await this.transactions.createFor(
      scope,
      {
        input: {
          amount: link.amount,
          currency: link.currency,
          payment_method_type: 'card',
          confirm: false,
          capture_method: 'automatic',
          ...(link.description ? { description: link.description } : {}),
          receipt_email: details.email,
          metadata: JSON.parse(link.metadata) as Record<string, string>,
        },
        source: 'payment_link',
        terminalId: null,
        linkId: link.id,
        response: 'transaction',
      },
    );
    if (!payment.client_secret || !payment.processor_payment_intent_id) throw conflict('transaction_being_created', 'The payment is still being created; retry in a moment');
    return { client_secret: payment.client_secret, payment_intent: payment.processor_payment_intent_id, transaction: payment.reference };
  }

  /** The email the merchant gave the link, for the page to fill in. */
  customerEmailOf(row: PaymentLinksTable): string | null {
    return this.cipher.open('payment_links.customer_email', row.id, row.customer_email);
  }

  present(row: PaymentLinksTable): PaymentLink {
    const expiresAt = row.expires_at;
    return {
      id: row.id,
      object: 'payment_link',
      reference: row.reference,
      url: linkUrl(this.publicUrl(), row.reference),
      amount: row.amount,
      currency: row.currency.toUpperCase(),
      status: row.status === 'open' && expiresAt <= this.clock.now() ? 'expired' : row.status,
      is_test: row.mode === 'test',
      description: row.description,
      customer_email: this.customerEmailOf(row),
      success_url: row.success_url,
      cancel_url: row.cancel_url,
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      expires_at: toIsoTimestamp(expiresAt),
      created_at: toIsoTimestamp(row.created_at),
      deactivated_at: toIsoOrNull(row.deactivated_at),
    };
  }
}
