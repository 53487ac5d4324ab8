import type Stripe from 'stripe';

/**
 * The processor's objects as the domain sees them. They are the stripe package's types: the domain
 * names them for what they are, so that only server/processor/ depends on the package.
 */
export type ProcessorPaymentIntent = Stripe.PaymentIntent;
export type ProcessorPaymentIntentStatus = Stripe.PaymentIntent.Status;
export type ProcessorPaymentMethodTypes = Stripe.PaymentIntentCreateParams['allowed_payment_method_types'];
export type ProcessorCancellationReason = Stripe.PaymentIntentCancelParams.CancellationReason;
export type ProcessorCharge = Stripe.Charge;
export type ProcessorRefund = Stripe.Refund;
export type ProcessorRefundReason = Stripe.RefundCreateParams.Reason;
export type ProcessorReader = Stripe.Terminal.Reader;
export type ProcessorDeletedReader = Stripe.Terminal.DeletedReader;
export type ProcessorEvent = Stripe.Event;
export type ProcessorDispute = Stripe.Dispute;
export type ProcessorDisputeStatus = Stripe.Dispute.Status;
export type ProcessorBalance = Stripe.Balance;
export type ProcessorPayout = Stripe.Payout;
export type ProcessorCustomer = Stripe.Customer;
export type ProcessorBankAccount = Stripe.BankAccount;
export type ProcessorAccount = Stripe.Account;
