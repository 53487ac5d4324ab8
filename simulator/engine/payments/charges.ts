import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { emptyBillingDetails, list } from '../shapes.js';
import type { PaymentMethodInternal, PaymentMethodRow } from './paymentMethods.js';
import type { Ledger, SourceType } from '../ledger.js';
import type { Transfers } from '../connect/transfers.js';
import type { DisputeOpenPayload } from '../disputes/types.js';
import type { ChargeRow, PaymentIntentRow, ReceiptView } from './types.js';
import { applicationFee, processingFee, stripeFee } from './fees.js';
import { bypassesPending, disputeBehaviour } from './instruments.js';

/**
 * Charges and the money a captured charge moves: the charge on the balance it was made on and, on
 * Connect with a destination, a transfer of the merchant's share to the connected account and the
 * platform's application fee, each with its balance transaction, as Stripe's destination charges
 * do. PaymentIntents (paymentIntents.ts, paymentAttempts.ts, captures.ts) decide when; this module writes what.
 */
export class Charges {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
    private readonly transfers: Transfers,
  ) {}

  private now(): number {
    return unixSeconds(this.kernel.now());
  }

  get(scope: Scope, id: string): ChargeRow {
    return getScoped<Stripe.Charge, Record<string, never>>(this.kernel, 'charge', scope, id, 'charge', 'id');
  }

  /** The receipt page's view of a charge (`receipt_url` works without a key, like Stripe's), or null when there is none. */
  receipt(id: string): ReceiptView | null {
    const found = this.kernel.store.find<Stripe.Charge, Record<string, never>>(id);
    if (!found || found.type !== 'charge') return null;
    const charge = found.body;
    return { id: charge.id, amount: charge.amount, amountRefunded: charge.amount_refunded, currency: charge.currency, status: charge.status };
  }

  /** Charges live where their intent lives: the platform, or the account it was made on. */
  scopeOf(row: PaymentIntentRow): Scope {
    return { livemode: row.livemode, account: row.account };
  }

  /** A new charge for an attempt on `pi` with `pm`, before its outcome is known. */
  build(scope: Scope, pi: Stripe.PaymentIntent, pm: PaymentMethodRow, amount: number): Stripe.Charge {
    const id = newId('ch');
    return {
      id,
      object: 'charge',
      amount,
      amount_captured: 0,
      amount_refunded: 0,
      application: null,
      application_fee: null,
      application_fee_amount: pi.application_fee_amount,
      balance_transaction: null,
      billing_details: (pm.body.billing_details as Stripe.Charge.BillingDetails | undefined) ?? emptyBillingDetails(),
      calculated_statement_descriptor: 'POS SIMULATOR',
      captured: false,
      created: this.now(),
      currency: pi.currency,
      customer: typeof pi.customer === 'string' ? pi.customer : null,
      description: pi.description,
      disputed: false,
      failure_balance_transaction: null,
      failure_code: null,
      failure_message: null,
      fraud_details: {},
      livemode: scope.livemode,
      metadata: { ...pi.metadata },
      on_behalf_of: pi.on_behalf_of,
      outcome: null,
      paid: false,
      payment_intent: pi.id,
      payment_method: pm.id,
      payment_method_details: this.methodDetails(pm, amount, pi),
      receipt_email: pi.receipt_email,
      receipt_number: null,
      receipt_url: `${this.kernel.config.baseUrl}/_sim/receipts/${id}`,
      refunded: false,
      refunds: list(`/v1/charges/${id}/refunds`, []),
      review: null,
      shipping: null,
      source: null,
      source_transfer: null,
      statement_descriptor: pi.statement_descriptor,
      statement_descriptor_suffix: pi.statement_descriptor_suffix,
      status: 'pending',
      transfer_data: pi.transfer_data ? { amount: pi.transfer_data.amount ?? null, destination: pi.transfer_data.destination } : null,
      transfer_group: pi.transfer_group,
    };
  }

  /**
   * The reader whose payment action is collecting `pi` (its action still names the intent when the
   * issuer answers) and its location, which Stripe reports on a card-present charge.
   */
  private readerOf(pi: Stripe.PaymentIntent): { id: string; location: string | null } | undefined {
    const reader = this.kernel.store
      .all<Stripe.Terminal.Reader, unknown>('terminal.reader')
      .find((row) => row.body.action?.process_payment_intent?.payment_intent === pi.id)?.body;
    if (!reader) return undefined;
    return { id: reader.id, location: typeof reader.location === 'string' ? reader.location : (reader.location?.id ?? null) };
  }

  private methodDetails(pm: PaymentMethodRow, amount: number, pi: Stripe.PaymentIntent): Stripe.Charge.PaymentMethodDetails {
    const body = pm.body;
    if (body.type === 'card' && body.card) {
      const card = body.card;
      return {
        type: 'card',
        card: {
          amount_authorized: amount,
          authorization_code: String(100000 + (amount % 900000)),
          brand: card.brand,
          checks: card.checks,
          country: card.country,
          electronic_commerce_indicator: null,
          exp_month: card.exp_month,
          exp_year: card.exp_year,
          extended_authorization: { status: 'disabled' },
          fingerprint: card.fingerprint ?? null,
          funding: card.funding,
          incremental_authorization: { status: 'unavailable' },
          installments: null,
          last4: card.last4,
          mandate: null,
          multicapture: { status: 'unavailable' },
          network: card.brand,
          network_token: { used: false },
          network_transaction_id: newId('ntx').slice(4, 19),
          overcapture: { maximum_amount_capturable: amount, status: 'unavailable' },
          regulated_status: 'unregulated',
          three_d_secure: null,
          transaction_link_id: null,
          wallet: null,
        },
      } as Stripe.Charge.PaymentMethodDetails;
    }
    if ((body.type === 'card_present' || body.type === 'interac_present') && (body.card_present ?? body.interac_present)) {
      const card = (body.card_present ?? body.interac_present)!;
      const emv = emvApplication(card.brand ?? 'unknown', card.funding ?? 'credit');
      const verification = cardholderVerification(amount - (pi.amount_details?.tip?.amount ?? 0));
      const reader = this.readerOf(pi);
      const details = {
        amount_authorized: amount,
        brand: card.brand,
        brand_product: null,
        cardholder_name: null,
        country: card.country,
        emv_auth_data: '8A023030',
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        fingerprint: card.fingerprint,
        funding: card.funding,
        generated_card: null,
        incremental_authorization_supported: false,
        last4: card.last4,
        network: card.brand,
        network_transaction_id: newId('ntx').slice(4, 19),
        offline: null,
        overcapture_supported: false,
        preferred_locales: ['en'],
        read_method: verification.readMethod,
        reader: reader?.id ?? null,
        location: reader?.location ?? null,
        receipt: {
          account_type: emv.accountType,
          application_cryptogram: randomBytes(8).toString('hex').toUpperCase(),
          application_preferred_name: emv.name,
          authorization_code: String(100000 + (amount % 900000)),
          authorization_response_code: '3030',
          cardholder_verification_method: verification.method,
          dedicated_file_name: emv.aid,
          terminal_verification_results: '0000008000',
          transaction_status_information: verification.method === 'offline_pin' ? 'E800' : '6800',
        },
      };
      return (body.type === 'card_present' ? { type: 'card_present', card_present: details } : { type: 'interac_present', interac_present: details }) as Stripe.Charge.PaymentMethodDetails;
    }
    if (body.type === 'customer_balance') return { type: 'customer_balance', customer_balance: {} } as Stripe.Charge.PaymentMethodDetails;
    const bank = body.us_bank_account;
    return {
      type: 'us_bank_account',
      us_bank_account: {
        account_holder_type: bank?.account_holder_type ?? 'individual',
        account_type: bank?.account_type ?? 'checking',
        bank_name: bank?.bank_name ?? null,
        fingerprint: bank?.fingerprint ?? null,
        last4: bank?.last4 ?? null,
        payment_reference: null,
        routing_number: bank?.routing_number ?? null,
      },
    } as Stripe.Charge.PaymentMethodDetails;
  }

  /**
   * Moves captured money: the charge (less Stripe's fee) onto the balance it was made on, the
   * destination transfer and the application fee; then, for a dispute test card, the dispute to come.
   */
  capture(origin: Origin, row: PaymentIntentRow, chargeRow: ChargeRow, amount: number): void {
    const pi = row.body;
    const charge = chargeRow.body;
    const scope = this.scopeOf(row);
    const platform: Scope = { livemode: row.livemode, account: null };
    charge.captured = true;
    charge.paid = true;
    charge.status = 'succeeded';
    charge.amount_captured = amount;
    if (amount < charge.amount) charge.amount_refunded = charge.amount - amount;
    charge.application_fee_amount = pi.application_fee_amount;
    const cardNumber = this.kernel.store.find<unknown, PaymentMethodInternal>(String(charge.payment_method))?.internal.cardNumber ?? '';
    const methodType = charge.payment_method_details?.type ?? 'card';
    // A customer balance holds what bank transfers brought in.
    const sourceType: SourceType = methodType === 'us_bank_account' || methodType === 'customer_balance' ? 'bank_account' : 'card';
    const availability = bypassesPending(cardNumber) ? 'available' : 'pending';
    const fee = pi.application_fee_amount ?? 0;
    const destination = typeof pi.transfer_data?.destination === 'string' ? pi.transfer_data.destination : null;
    // A direct charge's fees are the connected account's: Stripe's and the platform's application fee.
    const fees = [stripeFee(processingFee(amount, methodType), charge.currency, 'Stripe processing fees')];
    if (row.account !== null && fee > 0) fees.push(applicationFee(fee, charge.currency));
    const chargeTxn = this.ledger.record(origin, scope, {
      type: 'charge',
      amount,
      currency: charge.currency,
      source: charge.id,
      description: charge.description,
      reportingCategory: 'charge',
      fees,
      sourceType,
      availability,
    });
    this.ledger.creditedNow(origin, scope, chargeTxn);
    charge.balance_transaction = chargeTxn.id;
    if (destination) {
      const group = pi.transfer_group ?? `group_${pi.id}`;
      pi.transfer_group = group;
      charge.transfer_group = group;
      const transferAmount = pi.transfer_data?.amount ?? amount - fee;
      const transfer = this.transfers.create(origin, row.livemode, {
        amount: Math.max(0, Math.min(transferAmount, amount)),
        currency: pi.currency,
        destination,
        sourceTransaction: charge.id,
        transferGroup: group,
        sourceType,
        availability,
      });
      charge.transfer = transfer.id;
    }
    if (fee > 0 && (destination || row.account)) {
      const feeId = newId('fee');
      // On a destination charge the fee is what the platform keeps of the charge (the transfer is
      // the rest), so only a direct charge credits it to the platform as a balance transaction.
      const feeTxn = row.account
        ? this.ledger.record(origin, platform, {
            type: 'application_fee',
            amount: fee,
            currency: pi.currency,
            source: feeId,
            description: null,
            reportingCategory: 'platform_earning',
            sourceType,
            availability,
          })
        : null;
      if (feeTxn) this.ledger.creditedNow(origin, platform, feeTxn);
      const applicationFeeObject: Stripe.ApplicationFee = {
        id: feeId,
        object: 'application_fee',
        account: destination ?? row.account ?? '',
        amount: fee,
        amount_refunded: 0,
        application: 'ca_simulator',
        balance_transaction: feeTxn?.id ?? chargeTxn.id,
        charge: charge.id,
        created: this.now(),
        currency: pi.currency,
        fee_source: { charge: charge.id, type: 'charge' },
        livemode: row.livemode,
        originating_transaction: null,
        refunded: false,
        refunds: list(`/v1/application_fees/${feeId}/refunds`, []),
      };
      this.kernel.store.insert('application_fee', platform, applicationFeeObject, {});
      charge.application_fee = feeId;
      this.kernel.events.emit({ ...origin, scope: platform }, 'application_fee.created', applicationFeeObject);
    }
    this.kernel.store.save(chargeRow);
    if (methodType === 'card' && disputeBehaviour(cardNumber)) {
      const payload: DisputeOpenPayload = { charge: charge.id, apiVersion: origin.apiVersion };
      this.kernel.timers.schedule('dispute_open', this.kernel.now() + this.kernel.config.disputeDelayMs, payload);
    }
  }
}

/**
 * The EMV application a test card's chip offers (EMV tags 84 and 9F12, what Stripe reports as
 * `receipt.dedicated_file_name` and `application_preferred_name`): the schemes' registered AIDs.
 */
function emvApplication(brand: string, funding: string): { aid: string; name: string; accountType: 'credit' | 'checking' | 'prepaid' | 'unknown' } {
  const accountType = funding === 'debit' ? 'checking' : funding === 'prepaid' ? 'prepaid' : funding === 'credit' ? 'credit' : 'unknown';
  const debit = funding === 'debit';
  switch (brand) {
    case 'visa':
      return { aid: 'A0000000031010', name: debit ? 'VISA DEBIT' : 'VISA CREDIT', accountType };
    case 'mastercard':
      return { aid: 'A0000000041010', name: debit ? 'DEBIT MASTERCARD' : 'MASTERCARD', accountType };
    case 'amex':
      return { aid: 'A00000002501', name: 'AMERICAN EXPRESS', accountType };
    case 'discover':
    case 'diners':
      return { aid: 'A0000001523010', name: brand === 'diners' ? 'DINERS CLUB' : 'DISCOVER', accountType };
    case 'jcb':
      return { aid: 'A0000000651010', name: 'JCB', accountType };
    case 'unionpay':
      return { aid: 'A000000333010101', name: debit ? 'UNIONPAY DEBIT' : 'UNIONPAY CREDIT', accountType };
    case 'interac':
      return { aid: 'A0000002771010', name: 'Interac', accountType: 'checking' };
    default:
      return { aid: 'A0000000000000', name: 'CARD', accountType: 'unknown' };
  }
}

/**
 * How the simulated cardholder verified, by the amount's last two digits as Stripe's Terminal test
 * amounts script it: 02 asks for an online PIN (still a tap), 03 for an offline PIN (the card is
 * inserted: offline PIN needs the chip); anything else is a tap under the no-CVM limit.
 */
function cardholderVerification(amount: number): { readMethod: 'contactless_emv' | 'contact_emv'; method: 'approval' | 'online_pin' | 'offline_pin' } {
  switch (amount % 100) {
    case 2:
      return { readMethod: 'contactless_emv', method: 'online_pin' };
    case 3:
      return { readMethod: 'contact_emv', method: 'offline_pin' };
    default:
      return { readMethod: 'contactless_emv', method: 'approval' };
  }
}
