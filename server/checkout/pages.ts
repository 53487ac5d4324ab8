import type { Mode } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { PageDetails } from '../../shared/contract/checkout.js';
import { type CheckoutService, type Collect, type PaymentStart, pageCollectOf } from './sessions.js';
import type { PaymentLinkService } from './payment-links.js';

export type PageKind = 'session' | 'link';

/** A payment made on a page, as its thank-you page shows it. */
export interface PaymentResult {
  reference: string;
  status: string;
  receiptUrl: string | null;
}

/** Everything a hosted page shows; no secrets (the client_secret is handed out on submit). */
export interface PageView {
  kind: PageKind;
  reference: string;
  /** `payable`, or why the page cannot take a payment. */
  state: 'payable' | 'complete' | 'expired' | 'deactivated';
  mode: Mode;
  merchantName: string;
  description: string | null;
  amount: number;
  currency: string;
  collect: Collect;
  prefill: { email: string | null; name: string | null };
  successUrl: string | null;
  cancelUrl: string | null;
  /** The paid payment of a complete session: what its thank-you page shows. */
  paid: PaymentResult | null;
  /** Wallets the merchant allows (the Payment Element shows them where the device supports them). */
  wallets: { applePay: boolean; googlePay: boolean };
}

/** The public side of sessions and links: what the hosted pages read and do, by reference only. */
export class CheckoutPages {
  constructor(
    private readonly store: Store,
    private readonly checkout: CheckoutService,
    private readonly links: PaymentLinkService,
  ) {}

  async view(kind: PageKind, reference: string): Promise<PageView | undefined> {
    return kind === 'session' ? this.#sessionView(reference) : this.#linkView(reference);
  }

  async startPayment(kind: PageKind, reference: string, details: PageDetails): Promise<PaymentStart> {
    return kind === 'session' ? this.checkout.startPayment(reference, details) : this.links.startPayment(reference, details);
  }

  /**
   * A payment started on the page `reference` (`transaction` is the txn_ reference `…/start` gave
   * the page), or undefined when it is not one of that page's: the page address and the payment's
   * reference together are what the thank-you page reads its receipt link with.
   */
  async paymentResult(kind: PageKind, reference: string, transaction: string): Promise<PaymentResult | undefined> {
    if (kind === 'session') {
      const row = await this.checkout.findByReference(reference);
      return row ? this.#payment('checkout_session_id', row.id, transaction) : undefined;
    }
    const row = await this.links.findByReference(reference);
    return row ? this.#payment('link_id', row.id, transaction) : undefined;
  }

  async #payment(owner: 'checkout_session_id' | 'link_id', ownerId: string, transaction: string | null): Promise<PaymentResult | undefined> {
    if (!transaction) return undefined;
    const row = await this.store.db
      .selectFrom('transactions')
      .select(['reference', 'status', 'receipt_url'])
      .where(owner, '=', ownerId)
      .where((eb) => eb.or([eb('reference', '=', transaction), eb('id', '=', transaction)]))
      .executeTakeFirst();
    return row ? { reference: row.reference, status: row.status, receiptUrl: row.receipt_url } : undefined;
  }

  async #merchantName(id: string): Promise<string> {
    const row = await this.store.db.selectFrom('merchants').select('business_name').where('id', '=', id).executeTakeFirstOrThrow();
    return row.business_name;
  }

  async #sessionView(reference: string): Promise<PageView | undefined> {
    const row = await this.checkout.findByReference(reference);
    if (!row) return undefined;
    const types = JSON.parse(row.payment_method_types) as string[];
    return {
      kind: 'session',
      reference: row.reference,
      state: row.status === 'open' ? 'payable' : row.status,
      mode: row.mode,
      merchantName: await this.#merchantName(row.merchant_id),
      description: row.description,
      amount: row.amount,
      currency: row.currency,
      collect: pageCollectOf(row),
      prefill: this.checkout.prefillOf(row),
      // Stripe's placeholder, so the merchant's success page can look the session up.
      successUrl: row.success_url?.replaceAll('{CHECKOUT_SESSION_ID}', row.reference) ?? null,
      cancelUrl: row.cancel_url,
      wallets: { applePay: types.includes('apple_pay'), googlePay: types.includes('google_pay') },
      paid: row.status === 'complete' ? ((await this.#payment('checkout_session_id', row.id, row.transaction_id)) ?? null) : null,
    };
  }

  async #linkView(reference: string): Promise<PageView | undefined> {
    const row = await this.links.findByReference(reference);
    if (!row) return undefined;
    return {
      kind: 'link',
      reference: row.reference,
      state: this.links.payable(row) ? 'payable' : row.status === 'deactivated' ? 'deactivated' : 'expired',
      mode: row.mode,
      merchantName: await this.#merchantName(row.merchant_id),
      description: row.description,
      amount: row.amount,
      currency: row.currency,
      // A link always asks for the email the receipt goes to, as Stripe's payment links do.
      collect: { email: true, name: false, phone: false, address: false },
      prefill: { email: this.links.customerEmailOf(row), name: null },
      successUrl: row.success_url,
      cancelUrl: row.cancel_url,
      wallets: { applePay: true, googlePay: true },
      paid: null,
    };
  }
}
