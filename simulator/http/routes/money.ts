import { Router } from 'express';
import { z } from 'zod';
import { SimError, invalidRequest } from '../../errors.js';
import { DEFAULT_LIST_LIMIT, bool, expand, int, listParams, metadata, optionalText, parse, str } from '../params.js';
import { errorReply } from '../endpoint.js';
import { type Services, handle, page } from '../services.js';

/**
 * Charges (the Charges API's create, and charges after the payment), transfers and their reversals,
 * application fees and their refunds, refund cancellation.
 */

const expandOnly = z.object({ expand }).strict();
const metadataOnly = z.object({ metadata: metadata.optional(), expand }).strict();
const chargeUpdate = z
  .object({
    description: optionalText.optional(),
    metadata: metadata.optional(),
    receipt_email: optionalText.optional(),
    transfer_group: str.optional(),
    fraud_details: z.object({ user_report: z.enum(['', 'fraudulent', 'safe']) }).strict().optional(),
    shipping: z.unknown().optional(),
    customer: z.unknown().optional(),
    expand,
  })
  .strict();
const chargeCreate = z
  .object({
    amount: int,
    currency: str,
    source: str.optional(),
    customer: str.optional(),
    capture: bool.optional(),
    description: str.optional(),
    metadata: metadata.optional(),
    receipt_email: str.optional(),
    statement_descriptor: str.optional(),
    statement_descriptor_suffix: str.optional(),
    application_fee_amount: int.optional(),
    on_behalf_of: str.optional(),
    transfer_data: z.object({ destination: str.optional(), amount: int.optional() }).strict().optional(),
    transfer_group: str.optional(),
    expand,
  })
  .strict();
const chargeCapture = z
  .object({ amount: int.optional(), application_fee_amount: int.optional(), receipt_email: z.unknown().optional(), statement_descriptor: z.unknown().optional(), statement_descriptor_suffix: z.unknown().optional(), expand })
  .strict();
const incrementSchema = z
  .object({ amount: int, description: str.optional(), metadata: metadata.optional(), application_fee_amount: int.optional(), statement_descriptor: z.unknown().optional(), transfer_data: z.unknown().optional(), expand })
  .strict();
const transferCreate = z
  .object({ amount: int, currency: str, destination: str, description: str.optional(), transfer_group: str.optional(), metadata: metadata.optional(), source_type: z.enum(['card', 'bank_account']).optional(), expand })
  .strict();
const transferUpdate = z.object({ description: str.optional(), metadata: metadata.optional(), expand }).strict();
const transferList = z.object({ ...listParams, destination: str.optional(), transfer_group: str.optional() }).strict();
const reversalCreate = z.object({ amount: int.optional(), description: str.optional(), metadata: metadata.optional(), refund_application_fee: z.unknown().optional(), expand }).strict();
const feeList = z.object({ ...listParams, charge: str.optional() }).strict();
const feeRefundCreate = z.object({ amount: int.optional(), metadata: metadata.optional(), expand }).strict();
const listOnly = z.object(listParams).strict();

export function moneyRouter(s: Services): Router {
  const r = Router();
  // The Charges API: a card token (`tok_visa`) charged at once, as Stripe does. The charge is made
  // through a PaymentIntent the simulator creates for it, so it is refunded, disputed and paid out
  // like any other (its `payment_intent` names it, where Stripe's legacy charge has none).
  r.post('/v1/charges', handle(s, ({ ctx, params }) => {
    const { expand: _expand, source, capture, customer, ...input } = parse(chargeCreate, params);
    if (source === undefined) {
      throw customer === undefined
        ? invalidRequest('Must provide source or customer.', 'source', 'parameter_missing')
        : invalidRequest('Cannot charge a customer that has no active card', 'customer', 'missing');
    }
    if (!source.startsWith('tok_')) throw invalidRequest(`No such token: '${source}'`, 'source', 'resource_missing');
    const outcome = s.payments.create(ctx, { ...input, payment_method: source.replace(/^tok_/, 'pm_card_'), payment_method_types: ['card'], confirm: true, capture_method: capture === false ? 'manual' : 'automatic' });
    const chargeId = typeof outcome.intent.latest_charge === 'string' ? outcome.intent.latest_charge : outcome.intent.latest_charge?.id;
    if (outcome.error) {
      // Stripe's decline of a charge names the charge it left, not a PaymentIntent.
      const { status, type, message, code, declineCode, param } = outcome.error;
      const options = { ...(code ? { code } : {}), ...(declineCode ? { declineCode } : {}), ...(param ? { param } : {}), ...(chargeId ? { extra: { charge: chargeId } } : {}) };
      return errorReply(new SimError(status, type, message, options));
    }
    if (!chargeId) throw invalidRequest('The card could not be charged.', 'source');
    return s.charges.get(ctx.scope, chargeId).body;
  }));
  r.post('/v1/charges/:id', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, shipping: _shipping, customer: _customer, ...input } = parse(chargeUpdate, params);
    return s.adjustments.updateCharge(ctx, String(path.id), input);
  }));
  r.post('/v1/charges/:id/capture', handle(s, ({ ctx, params, path }) => {
    const p = parse(chargeCapture, params);
    return s.adjustments.captureCharge(ctx, String(path.id), { amount: p.amount, application_fee_amount: p.application_fee_amount });
  }));
  r.post('/v1/payment_intents/:id/increment_authorization', handle(s, ({ ctx, params, path }) => {
    const p = parse(incrementSchema, params);
    return s.adjustments.incrementAuthorization(ctx, String(path.id), { amount: p.amount, description: p.description, metadata: p.metadata });
  }));
  r.post('/v1/refunds/:id/cancel', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.adjustments.cancelRefund(ctx, String(path.id));
  }));

  r.post('/v1/transfers', handle(s, ({ ctx, params }) => {
    const { expand: _expand, source_type: _sourceType, ...input } = parse(transferCreate, params);
    return s.platformMoney.createTransfer(ctx, input);
  }));
  r.get('/v1/transfers', handle(s, ({ ctx, params }) => {
    const p = parse(transferList, params);
    return s.platformMoney.listTransfers(ctx.scope, { destination: p.destination, transfer_group: p.transfer_group }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.post('/v1/transfers/:id', handle(s, ({ ctx, params, path }) => {
    const p = parse(transferUpdate, params);
    return s.platformMoney.updateTransfer(ctx, String(path.id), p.metadata, p.description);
  }));
  r.post('/v1/transfers/:id/reversals', handle(s, ({ ctx, params, path }) => {
    const p = parse(reversalCreate, params);
    return s.platformMoney.createReversal(ctx, String(path.id), { amount: p.amount, description: p.description, metadata: p.metadata });
  }));
  r.get('/v1/transfers/:id/reversals', handle(s, ({ ctx, params, path }) => s.platformMoney.listReversals(ctx.scope, String(path.id), page(parse(listOnly, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/transfers/:id/reversals/:reversal', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.platformMoney.retrieveReversal(ctx.scope, String(path.id), String(path.reversal));
  }));
  r.post('/v1/transfers/:id/reversals/:reversal', handle(s, ({ ctx, params, path }) => {
    return s.platformMoney.updateReversal(ctx, String(path.id), String(path.reversal), parse(metadataOnly, params).metadata);
  }));

  r.get('/v1/application_fees', handle(s, ({ ctx, params }) => {
    const p = parse(feeList, params);
    return s.platformMoney.listFees(ctx.scope, { charge: p.charge }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.post('/v1/application_fees/:id/refunds', handle(s, ({ ctx, params, path }) => {
    const p = parse(feeRefundCreate, params);
    return s.platformMoney.refundFee(ctx, String(path.id), { amount: p.amount, metadata: p.metadata });
  }));
  r.get('/v1/application_fees/:id/refunds', handle(s, ({ ctx, params, path }) => s.platformMoney.listFeeRefunds(ctx.scope, String(path.id), page(parse(listOnly, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/application_fees/:id/refunds/:refund', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.platformMoney.retrieveFeeRefund(ctx.scope, String(path.id), String(path.refund));
  }));
  r.post('/v1/application_fees/:id/refunds/:refund', handle(s, ({ ctx, params, path }) => {
    return s.platformMoney.updateFeeRefund(ctx, String(path.id), String(path.refund), parse(metadataOnly, params).metadata);
  }));
  return r;
}
