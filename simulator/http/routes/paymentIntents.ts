import { Router } from 'express';
import { z } from 'zod';
import { Reply, errorReply } from '../endpoint.js';
import { bool, DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, optionalText, parse, searchSchema, str, stringList } from '../params.js';
import { type Services, handle, page } from '../services.js';
import type { IntentResult } from '../../engine/payments/types.js';
import { search } from '../../engine/search.js';

/** Stripe's searchable fields (docs.stripe.com/search#query-fields-for-payment-intents, …-charges), cut to what the simulator keeps. */
const PAYMENT_INTENT_SEARCH_FIELDS = ['amount', 'created', 'currency', 'customer', 'metadata', 'status'] as const;
const CHARGE_SEARCH_FIELDS = ['amount', 'created', 'currency', 'customer', 'disputed', 'metadata', 'payment_intent', 'refunded', 'status'] as const;

const address = z.record(z.string(), z.string());

export const paymentMethodData = z
  .object({
    type: str,
    card: z.object({ token: str.optional(), number: str.optional(), exp_month: int.optional(), exp_year: int.optional(), cvc: str.optional() }).strict().optional(),
    us_bank_account: z
      .object({
        account_number: str.optional(),
        routing_number: str.optional(),
        account_holder_type: z.enum(['individual', 'company']).optional(),
        account_type: z.enum(['checking', 'savings']).optional(),
      })
      .strict()
      .optional(),
    customer_balance: z.object({}).strict().optional(),
    // Local payment methods' own details: accepted so the currency is checked first (engine/payments/intentRules.ts), then refused as not modelled.
    ...Object.fromEntries(['p24', 'blik', 'ideal', 'bancontact', 'eps', 'giropay', 'sofort'].map((type) => [type, z.record(z.string(), z.unknown()).optional()])),
    billing_details: z
      .object({ name: str.optional(), email: str.optional(), phone: str.optional(), address: address.optional() })
      .strict()
      .optional(),
    metadata: metadata.optional(),
    allow_redisplay: str.optional(),
  })
  .strict();

const captureMethod = z.enum(['automatic', 'automatic_async', 'manual']);
const futureUsage = z.union([z.literal(''), z.enum(['off_session', 'on_session'])]).transform((v) => (v === '' ? null : v));
/** Accepted and ignored: the simulator does not model these, but clients send them. */
const ignored = z.unknown().optional();
/**
 * Of the per-type options, the US bank account's verification method (microdeposits) and how a
 * customer balance collects what it lacks (a bank transfer) are read; the others are taken and ignored.
 */
const paymentMethodOptions = z
  .looseObject({
    us_bank_account: z.looseObject({ verification_method: z.enum(['automatic', 'instant', 'microdeposits']).optional() }).optional(),
    customer_balance: z
      .object({
        funding_type: z.enum(['bank_transfer']).optional(),
        bank_transfer: z.object({ type: str, requested_address_types: stringList.optional(), eu_bank_transfer: ignored }).strict().optional(),
      })
      .strict()
      .optional(),
  })
  .optional();

const createSchema = z
  .object({
    amount: int,
    currency: str,
    payment_method: str.optional(),
    payment_method_data: paymentMethodData.optional(),
    allowed_payment_method_types: stringList.optional(),
    payment_method_types: stringList.optional(),
    excluded_payment_method_types: ignored,
    confirm: bool.optional(),
    capture_method: captureMethod.optional(),
    application_fee_amount: int.optional(),
    transfer_data: z.object({ destination: str.optional(), amount: int.optional() }).strict().optional(),
    on_behalf_of: str.optional(),
    metadata: metadata.optional(),
    description: optionalText.optional(),
    receipt_email: optionalText.optional(),
    customer: str.optional(),
    return_url: str.optional(),
    setup_future_usage: futureUsage.optional(),
    statement_descriptor: optionalText.optional(),
    statement_descriptor_suffix: optionalText.optional(),
    transfer_group: str.optional(),
    automatic_payment_methods: ignored,
    payment_method_options: paymentMethodOptions,
    mandate_data: ignored,
    off_session: ignored,
    error_on_requires_action: ignored,
    use_stripe_sdk: ignored,
    confirmation_method: ignored,
    shipping: ignored,
    expand,
  })
  .strict();

const updateSchema = z
  .object({
    amount: int.optional(),
    currency: str.optional(),
    payment_method: str.optional(),
    allowed_payment_method_types: stringList.optional(),
    payment_method_types: stringList.optional(),
    excluded_payment_method_types: ignored,
    capture_method: captureMethod.optional(),
    application_fee_amount: z.union([z.literal('').transform(() => null), int]).optional(),
    metadata: metadata.optional(),
    description: optionalText.optional(),
    receipt_email: optionalText.optional(),
    setup_future_usage: futureUsage.optional(),
    statement_descriptor: optionalText.optional(),
    statement_descriptor_suffix: optionalText.optional(),
    transfer_group: str.optional(),
    payment_method_options: ignored,
    shipping: ignored,
    expand,
  })
  .strict();

const confirmSchema = z
  .object({
    payment_method: str.optional(),
    payment_method_data: paymentMethodData.optional(),
    return_url: str.optional(),
    receipt_email: optionalText.optional(),
    capture_method: captureMethod.optional(),
    setup_future_usage: futureUsage.optional(),
    client_secret: str.optional(),
    payment_method_options: paymentMethodOptions,
    allowed_payment_method_types: ignored,
    excluded_payment_method_types: ignored,
    payment_method_types: ignored,
    mandate_data: ignored,
    off_session: ignored,
    error_on_requires_action: ignored,
    use_stripe_sdk: ignored,
    shipping: ignored,
    expand,
  })
  .strict();

const captureSchema = z
  .object({ amount_to_capture: int.optional(), application_fee_amount: int.optional(), metadata: metadata.optional(), expand, statement_descriptor: ignored, statement_descriptor_suffix: ignored, final_capture: ignored })
  .strict();

const cancelSchema = z
  .object({ cancellation_reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned']).optional(), expand })
  .strict();

const retrieveSchema = z.object({ client_secret: str.optional(), expand }).strict();
const listSchema = z.object({ ...listParams, customer: str.optional() }).strict();
const chargeListSchema = z.object({ ...listParams, payment_intent: str.optional(), customer: str.optional() }).strict();
const expandOnly = z.object({ expand }).strict();

/**
 * API versions from 2026-10 name the requested list `allowed_payment_method_types`; older versions
 * send `payment_method_types`. Both are accepted and mean the same.
 */
function withTypes<T extends { allowed_payment_method_types?: string[] | undefined; payment_method_types?: string[] | undefined }>(
  params: T,
): Omit<T, 'allowed_payment_method_types'> {
  const { allowed_payment_method_types: allowed, ...rest } = params;
  return { ...rest, payment_method_types: allowed ?? params.payment_method_types };
}

const applyBalanceSchema = z.object({ amount: int.optional(), currency: str.optional(), expand }).strict();
const verifyMicrodepositsSchema = z.object({ amounts: z.array(int).optional(), descriptor_code: str.optional(), client_secret: str.optional(), expand }).strict();

function result(outcome: IntentResult): unknown {
  return outcome.error ? errorReply(outcome.error) : outcome.intent;
}

export function paymentIntentsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/payment_intents', handle(s, ({ ctx, params }) => result(s.payments.create(ctx, withTypes(parse(createSchema, params))))));
  r.get('/v1/payment_intents', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.payments.list(ctx.scope, { customer: p.customer }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/payment_intents/search', handle(s, ({ ctx, params }) => search(s.kernel, 'payment_intent', ctx.scope, 'payment_intents', PAYMENT_INTENT_SEARCH_FIELDS, parse(searchSchema, params))));
  r.get('/v1/payment_intents/:id', handle(s, ({ ctx, params, path }) => {
    const p = parse(retrieveSchema, params);
    return s.payments.retrieve(ctx.scope, String(path.id), ctx.keyKind === 'publishable' ? p.client_secret : undefined);
  }, { publishable: true }));
  r.post('/v1/payment_intents/:id', handle(s, ({ ctx, params, path }) => s.payments.update(ctx, String(path.id), withTypes(parse(updateSchema, params)))));
  r.post('/v1/payment_intents/:id/confirm', handle(s, ({ ctx, params, path }) => {
    const p = parse(confirmSchema, params);
    return result(s.payments.confirm(ctx, String(path.id), p, ctx.keyKind === 'publishable' ? p.client_secret : undefined));
  }, { publishable: true }));
  r.post('/v1/payment_intents/:id/capture', handle(s, ({ ctx, params, path }) => s.captures.capture(ctx, String(path.id), parse(captureSchema, params))));
  r.post('/v1/payment_intents/:id/cancel', handle(s, ({ ctx, params, path }) => {
    const p = parse(cancelSchema, params);
    return s.captures.cancel(ctx, String(path.id), p.cancellation_reason);
  }));

  r.post('/v1/payment_intents/:id/apply_customer_balance', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(applyBalanceSchema, params);
    return s.cashBalancePayments.apply(ctx, String(path.id), input);
  }));
  r.post('/v1/payment_intents/:id/verify_microdeposits', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, client_secret: _secret, ...input } = parse(verifyMicrodepositsSchema, params);
    return s.payments.verifyMicrodeposits(ctx, String(path.id), input);
  }));

  r.get('/v1/charges', handle(s, ({ ctx, params }) => {
    const p = parse(chargeListSchema, params);
    const found = s.kernel.store.list('charge', ctx.scope, { payment_intent: p.payment_intent, customer: p.customer }, page(p, DEFAULT_LIST_LIMIT));
    return { object: 'list', data: found.data.map((row) => row.body), has_more: found.hasMore, url: '/v1/charges' };
  }));
  r.get('/v1/charges/search', handle(s, ({ ctx, params }) => search(s.kernel, 'charge', ctx.scope, 'charges', CHARGE_SEARCH_FIELDS, parse(searchSchema, params))));
  r.get('/v1/charges/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.charges.get(ctx.scope, String(path.id)).body;
  }));
  r.get('/v1/transfers/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return getPlatformObject(s, ctx.scope.livemode, 'transfer', String(path.id));
  }));
  r.get('/v1/application_fees/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return getPlatformObject(s, ctx.scope.livemode, 'application_fee', String(path.id));
  }));
  return r;
}

/** Transfers and application fees live on the platform, whoever asks. */
function getPlatformObject(s: Services, livemode: boolean, type: string, id: string): unknown {
  const found = s.kernel.store.find<unknown, unknown>(id);
  if (!found || found.type !== type || found.livemode !== livemode) {
    return new Reply(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${type}: '${id}'`, param: 'id', doc_url: 'https://stripe.com/docs/error-codes/resource-missing' } });
  }
  return found.body;
}
