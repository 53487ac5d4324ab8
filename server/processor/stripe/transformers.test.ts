import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { disputeSnapshot, eventSnapshot, paymentSnapshot, readerSnapshot } from './transformers.js';

/** Stripe's objects as the API sends them, only the fields that matter to each case. */
const stripe = <T>(object: Record<string, unknown>): T => object as unknown as T;

describe("Stripe's objects as pos snapshots", () => {
  it('reads a paid card-present PaymentIntent: its card, tip and what the receipt prints', () => {
    const snapshot = paymentSnapshot(
      stripe<Stripe.PaymentIntent>({
        id: 'pi_1',
        object: 'payment_intent',
        status: 'succeeded',
        amount: 1200,
        amount_received: 1200,
        amount_details: { tip: { amount: 200 } },
        currency: 'usd',
        client_secret: 'pi_1_secret',
        metadata: { pos_transaction_id: 'txn' },
        last_payment_error: null,
        cancellation_reason: null,
        latest_charge: {
          id: 'ch_1',
          payment_method_details: {
            type: 'card_present',
            card_present: {
              brand: 'visa',
              last4: '4242',
              read_method: 'contactless_emv',
              location: 'tml_1',
              receipt: { application_preferred_name: 'VISA CREDIT', dedicated_file_name: 'A0000000031010', authorization_code: '123456', authorization_response_code: '3030', account_type: 'credit', cardholder_verification_method: 'approval' },
            },
          },
        },
      }),
    );
    expect(snapshot).toMatchObject({ id: 'pi_1', status: 'succeeded', tip: 200, clientSecret: 'pi_1_secret', card: { brand: 'visa', last4: '4242' }, failureCode: null });
    expect(snapshot.receipt).toEqual({
      readMethod: 'contactless_emv',
      applicationName: 'VISA CREDIT',
      aid: 'A0000000031010',
      authorizationCode: '123456',
      responseCode: '3030',
      accountType: 'credit',
      verificationMethod: 'approval',
      location: 'tml_1',
    });
  });

  it('reads a declined PaymentIntent whose charge was not expanded, and a status Stripe may add later as still pending', () => {
    const declined = paymentSnapshot(
      stripe<Stripe.PaymentIntent>({ id: 'pi_2', status: 'requires_payment_method', amount: 500, amount_received: 0, currency: 'eur', latest_charge: 'ch_2', last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' } }),
    );
    expect(declined).toMatchObject({ failureCode: 'card_declined', declineCode: 'insufficient_funds', card: null, clientSecret: null, metadata: {} });
    expect(paymentSnapshot(stripe<Stripe.PaymentIntent>({ id: 'pi_3', status: 'requires_reauthorization', amount: 1, amount_received: 0, currency: 'usd' })).status).toBe('requires_action');
  });

  it("reads a reader's action, and whether the payment that came with it is being authorised", () => {
    const reader = readerSnapshot(
      stripe<Stripe.Terminal.Reader>({
        id: 'tmr_1',
        serial_number: 'WPE-1',
        device_type: 'simulated_wisepos_e',
        status: null,
        last_seen_at: null,
        action: { type: 'process_payment_intent', status: 'in_progress', failure_code: null, failure_message: null, process_payment_intent: { payment_intent: { id: 'pi_1', status: 'processing' } } },
      }),
    );
    expect(reader).toMatchObject({ status: 'offline', action: { type: 'process_payment_intent', status: 'in_progress', paymentIntentId: 'pi_1', authorising: true } });
  });

  it("reads a dispute's evidence as text and its funds from its balance transactions", () => {
    const dispute = disputeSnapshot(
      stripe<Stripe.Dispute>({
        id: 'dp_1',
        payment_intent: 'pi_1',
        status: 'won',
        amount: 1000,
        currency: 'USD',
        reason: 'fraudulent',
        evidence: { uncategorized_text: 'receipt attached', receipt: { id: 'file_1' }, customer_name: null, billing_address: '' },
        evidence_details: { submission_count: 1, due_by: 1_800_000_000 },
        balance_transactions: [{ amount: -1000 }, { amount: 1000 }],
      }),
    );
    expect(dispute).toMatchObject({ currency: 'usd', evidence: { uncategorized_text: 'receipt attached', receipt: 'file_1' }, submissionCount: 1, dueBy: 1_800_000_000_000, fundsWithdrawn: true, fundsReinstated: true });
    expect(Object.keys(dispute.evidence)).toHaveLength(2);
  });

  it('reads a charge event: whether it paid and the card that paid, as its receipt prints it', () => {
    const event = eventSnapshot(stripe<Stripe.Event>({
      id: 'evt_3', type: 'charge.succeeded', livemode: false, created: 1,
      data: { object: { id: 'ch_2', object: 'charge', status: 'succeeded', payment_intent: 'pi_2', payment_method_details: { type: 'card_present', card_present: { brand: 'visa', last4: '4242', read_method: 'contactless_emv', receipt: { authorization_code: '123456' } } } } },
    }));
    expect(event.subject).toMatchObject({ kind: 'charge', id: 'ch_2', paymentIntentId: 'pi_2', charge: { succeeded: true, card: { brand: 'visa', last4: '4242' }, receipt: { readMethod: 'contactless_emv', authorizationCode: '123456' } } });
  });

  it('reads an event: its mode, account, time and what it is about', () => {
    const event = eventSnapshot(stripe<Stripe.Event>({ id: 'evt_1', type: 'charge.refunded', livemode: true, created: 1_700_000_000, account: 'acct_1', data: { object: { id: 'ch_1', object: 'charge', payment_intent: 'pi_1' } } }));
    expect(event).toEqual({ id: 'evt_1', type: 'charge.refunded', mode: 'live', createdAt: 1_700_000_000_000, account: 'acct_1', subject: { kind: 'charge', id: 'ch_1', paymentIntentId: 'pi_1', charge: expect.objectContaining({ card: null }) } });
    expect(eventSnapshot(stripe<Stripe.Event>({ id: 'evt_2', type: 'unknown.thing', livemode: false, created: 1, data: { object: { object: 'mystery' } } })).subject).toEqual({ kind: 'other', id: null });
  });
});
