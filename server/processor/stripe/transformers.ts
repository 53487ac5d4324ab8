import type Stripe from 'stripe';
import {
  type AccountSnapshot,
  type BalanceSnapshot,
  type BankAccountSnapshot,
  type CardReceipt,
  type CustomerSnapshot,
  type DisputeSnapshot,
  EMPTY_REQUIREMENTS,
  type EventSubject,
  NO_RECEIPT,
  type PaymentSnapshot,
  type PaymentStatus,
  type PayoutSnapshot,
  type ProcessorEvent,
  type ReaderActionSnapshot,
  type ReaderSnapshot,
  type RefundSnapshot,
} from '../snapshots.js';

/**
 * Stripe's objects as pos's snapshots: the one place that reads Stripe's field names. Every answer
 * of the adapter and every event it verifies passes through here, so the domain reads the same
 * snapshot whether the processor is Stripe, the simulator or the in-memory fake.
 */

const PAYMENT_STATUSES: ReadonlySet<string> = new Set<PaymentStatus>(['requires_payment_method', 'requires_confirmation', 'requires_action', 'processing', 'requires_capture', 'canceled', 'succeeded']);

/** A status Stripe adds later reads as one still waiting for the customer: pending, for us. */
function paymentStatusOf(status: string): PaymentStatus {
  return PAYMENT_STATUSES.has(status) ? (status as PaymentStatus) : 'requires_action';
}

/** A reader action's status; one Stripe adds later reads as not finished, so the reader is read again. */
function actionStatusOf(status: string): ReaderActionSnapshot['status'] {
  return status === 'succeeded' || status === 'failed' ? status : 'in_progress';
}

/** An id, or the id of an expanded object. */
function idOf(ref: string | { id: string } | null | undefined): string | null {
  if (!ref) return null;
  return typeof ref === 'string' ? ref : ref.id;
}

/** Stripe's card-present details (and an online card's authorisation code) as what a receipt prints. */
function receiptOf(charge: Stripe.Charge | null): CardReceipt {
  const details = charge?.payment_method_details;
  const present = details?.card_present ?? details?.interac_present ?? null;
  if (present) {
    const receipt = present.receipt;
    return {
      readMethod: present.read_method ?? null,
      applicationName: receipt?.application_preferred_name ?? null,
      aid: receipt?.dedicated_file_name ?? null,
      authorizationCode: receipt?.authorization_code ?? null,
      responseCode: receipt?.authorization_response_code ?? null,
      accountType: receipt?.account_type ?? null,
      verificationMethod: receipt?.cardholder_verification_method ?? null,
      location: present.location ?? null,
    };
  }
  return { ...NO_RECEIPT, authorizationCode: details?.card?.authorization_code ?? null };
}

function cardOf(charge: Stripe.Charge | null): PaymentSnapshot['card'] {
  const details = charge?.payment_method_details;
  const card = details?.card ?? details?.card_present ?? null;
  if (card) return { brand: card.brand ?? null, last4: card.last4 ?? null };
  const bank = details?.us_bank_account;
  if (bank) return { brand: bank.bank_name ?? 'us_bank_account', last4: bank.last4 ?? null };
  return null;
}

/** A PaymentIntent, with its latest charge when expanded (the adapter always expands it). */
export function paymentSnapshot(pi: Stripe.PaymentIntent): PaymentSnapshot {
  const charge = typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
  const error = pi.last_payment_error;
  return {
    id: pi.id,
    status: paymentStatusOf(pi.status),
    amount: pi.amount,
    amountReceived: pi.amount_received,
    tip: pi.amount_details?.tip?.amount ?? 0,
    currency: pi.currency,
    clientSecret: pi.client_secret ?? null,
    metadata: { ...(pi.metadata ?? {}) },
    failureCode: error ? (error.code ?? 'payment_failed') : null,
    declineCode: error?.decline_code ?? null,
    failureMessage: error?.message ?? null,
    card: cardOf(charge),
    receipt: receiptOf(charge),
    cancellationReason: pi.cancellation_reason ?? null,
  };
}

/** A PaymentIntent as a decline error carries it, with the card it tried (its charge is not expanded there). */
export function declinedSnapshot(pi: Stripe.PaymentIntent, method: Stripe.PaymentMethod | undefined): PaymentSnapshot {
  const snapshot = paymentSnapshot(pi);
  const card = method?.card ?? method?.card_present ?? null;
  return card && !snapshot.card ? { ...snapshot, card: { brand: card.brand ?? null, last4: card.last4 ?? null } } : snapshot;
}

export function refundSnapshot(refund: Stripe.Refund): RefundSnapshot {
  return { id: refund.id, status: refund.status ?? null, failureReason: refund.failure_reason ?? null, metadata: { ...(refund.metadata ?? {}) } };
}

export function readerSnapshot(reader: Stripe.Terminal.Reader): ReaderSnapshot {
  const action = reader.action;
  const intent = action?.process_payment_intent?.payment_intent;
  return {
    id: reader.id,
    serialNumber: reader.serial_number,
    deviceType: reader.device_type,
    status: reader.status === 'online' ? 'online' : 'offline',
    lastSeenAt: reader.last_seen_at ?? null,
    action: action
      ? {
          type: action.type,
          status: actionStatusOf(action.status),
          paymentIntentId: idOf(intent),
          authorising: typeof intent === 'object' && intent?.status === 'processing',
          failureCode: action.failure_code ?? null,
          failureMessage: action.failure_message ?? null,
        }
      : null,
  };
}

/**
 * Evidence as text: Stripe gives file fields as file ids, or as the file when expanded. Funds moved
 * as the dispute's balance transactions say: a withdrawal is negative, a reinstatement positive.
 */
export function disputeSnapshot(dispute: Stripe.Dispute): DisputeSnapshot {
  const movements = Array.isArray(dispute.balance_transactions) ? dispute.balance_transactions : [];
  const evidence: Record<string, string> = {};
  for (const [field, value] of Object.entries((dispute.evidence ?? {}) as unknown as Record<string, unknown>)) {
    if (typeof value === 'string' && value !== '') evidence[field] = value;
    else if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string') evidence[field] = (value as { id: string }).id;
  }
  return {
    id: dispute.id,
    paymentIntentId: idOf(dispute.payment_intent),
    status: dispute.status,
    amount: dispute.amount,
    currency: dispute.currency.toLowerCase(),
    reason: dispute.reason,
    evidence,
    submissionCount: dispute.evidence_details?.submission_count ?? 0,
    dueBy: dispute.evidence_details?.due_by ? dispute.evidence_details.due_by * 1000 : null,
    fundsWithdrawn: movements.some((m) => typeof m === 'object' && m.amount < 0),
    fundsReinstated: movements.some((m) => typeof m === 'object' && m.amount > 0),
  };
}

export function payoutSnapshot(payout: Stripe.Payout): PayoutSnapshot {
  return {
    id: payout.id,
    amount: payout.amount,
    currency: payout.currency.toLowerCase(),
    status: payout.status,
    automatic: payout.automatic,
    description: payout.description ?? null,
    arrivalDate: payout.arrival_date ? payout.arrival_date * 1000 : null,
    failureCode: payout.failure_code ?? null,
    failureMessage: payout.failure_message ?? null,
    metadata: { ...(payout.metadata ?? {}) },
  };
}

export function balanceSnapshot(balance: Stripe.Balance): BalanceSnapshot {
  const side = (entries: { amount: number; currency: string }[]) => entries.map((e) => ({ amount: e.amount, currency: e.currency }));
  return { available: side(balance.available), pending: side(balance.pending) };
}

export function bankAccountSnapshot(bank: Stripe.BankAccount): BankAccountSnapshot {
  return {
    id: bank.id,
    bankName: bank.bank_name ?? null,
    last4: bank.last4,
    routingNumber: bank.routing_number ?? null,
    country: bank.country,
    currency: bank.currency,
    holderName: bank.account_holder_name ?? null,
    status: bank.status,
    defaultForCurrency: bank.default_for_currency === true,
  };
}

export function accountSnapshot(account: Stripe.Account): AccountSnapshot {
  const r = account.requirements;
  return {
    id: account.id,
    type: account.type ?? null,
    chargesEnabled: account.charges_enabled === true,
    payoutsEnabled: account.payouts_enabled === true,
    detailsSubmitted: account.details_submitted === true,
    requirements: r
      ? {
          currently_due: [...(r.currently_due ?? [])],
          past_due: [...(r.past_due ?? [])],
          eventually_due: [...(r.eventually_due ?? [])],
          pending_verification: [...(r.pending_verification ?? [])],
          current_deadline: r.current_deadline ?? null,
          disabled_reason: r.disabled_reason ?? null,
          errors: (r.errors ?? []).map((e) => ({ requirement: e.requirement, code: e.code, reason: e.reason })),
        }
      : { ...EMPTY_REQUIREMENTS, errors: [] },
  };
}

export function customerSnapshot(customer: Stripe.Customer): CustomerSnapshot {
  return {
    id: customer.id,
    name: customer.name ?? null,
    email: customer.email ?? null,
    phone: customer.phone ?? null,
    description: customer.description ?? null,
    metadata: { ...(customer.metadata ?? {}) },
  };
}

/** What an event carries, by the kind of its object. */
function subjectOf(object: { object?: unknown; id?: unknown }): EventSubject {
  const id = typeof object.id === 'string' ? object.id : null;
  switch (object.object) {
    case 'payment_intent':
      return { kind: 'payment', payment: paymentSnapshot(object as Stripe.PaymentIntent) };
    case 'charge': {
      const charge = object as Stripe.Charge;
      return { kind: 'charge', id: id ?? '', paymentIntentId: idOf(charge.payment_intent), charge: { succeeded: charge.status === 'succeeded', card: cardOf(charge), receipt: receiptOf(charge) } };
    }
    case 'refund':
      return { kind: 'refund', refund: refundSnapshot(object as Stripe.Refund) };
    case 'dispute':
      return { kind: 'dispute', id: id ?? '' };
    case 'terminal.reader':
      return { kind: 'reader', reader: readerSnapshot(object as Stripe.Terminal.Reader) };
    case 'payout':
      return { kind: 'payout', id: id ?? '' };
    case 'account':
      return { kind: 'account', id: id ?? '' };
    default:
      return { kind: 'other', id };
  }
}

export function eventSnapshot(event: Stripe.Event): ProcessorEvent {
  return {
    id: event.id,
    type: event.type,
    mode: event.livemode ? 'live' : 'test',
    createdAt: event.created * 1000,
    account: event.account ?? null,
    // A signed event is the processor's, but its object is read defensively all the same.
    subject: subjectOf((event.data?.object ?? {}) as { object?: unknown; id?: unknown }),
  };
}
