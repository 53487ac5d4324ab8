import { Router } from 'express';
import { z } from 'zod';
import { invalidRequest } from '../../errors.js';
import { DEFAULT_LIST_LIMIT, bool, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const address = z.record(z.string(), z.string());
const locationCreate = z
  .object({ display_name: str.optional(), address: address.optional(), metadata: metadata.optional(), configuration_overrides: str.optional(), phone: str.optional(), expand })
  .strict();
const readerCreate = z.object({ registration_code: str, location: str.optional(), label: str.optional(), metadata: metadata.optional(), expand }).strict();
const readerUpdate = z.object({ label: str.optional(), metadata: metadata.optional(), expand }).strict();
const readerList = z
  .object({ ...listParams, location: str.optional(), status: z.enum(['online', 'offline']).optional(), device_type: str.optional(), serial_number: str.optional() })
  .strict();
const processConfig = z
  .object({
    skip_tipping: bool.optional(),
    enable_customer_cancellation: bool.optional(),
    tipping: z.object({ amount_eligible: int.optional() }).strict().optional(),
    return_url: str.optional(),
    allow_redisplay: z.enum(['always', 'limited', 'unspecified']).optional(),
  })
  .strict();
const processSchema = z.object({ payment_intent: str, process_config: processConfig.optional(), expand }).strict();
/** Form bodies carry arrays as `a[0]=…` (an array once parsed) and, past qs's array limit, as an object of indices. */
const intList = z.union([z.array(int), z.record(z.string(), int).transform((o) => Object.values(o))]);
const tippingCurrency = z.object({ fixed_amounts: intList.optional(), percentages: intList.optional(), smart_tip_threshold: int.optional() }).strict();
/** A device type's settings: its splash screen is an uploaded file (Files API). */
const deviceSettings = z.union([z.literal(''), z.object({ splashscreen: str.optional() }).strict()]).optional();
const configurationSchema = z
  .object({ name: str.optional(), tipping: z.union([z.literal(''), z.record(z.string(), tippingCurrency)]).optional(), bbpos_wisepos_e: deviceSettings, stripe_s700: deviceSettings, expand })
  .strict();

/**
 * Files and SetupIntents are not resources the simulator has: no file or SetupIntent id can exist
 * in it, so a splash screen or a reader's SetupIntent is refused as Stripe refuses an unknown id in
 * a parameter (400 `resource_missing`).
 */
function withoutFiles<T extends { bbpos_wisepos_e?: '' | { splashscreen?: string | undefined } | undefined; stripe_s700?: '' | { splashscreen?: string | undefined } | undefined }>(
  input: T,
): Omit<T, 'bbpos_wisepos_e' | 'stripe_s700'> {
  const { bbpos_wisepos_e: wisepos, stripe_s700: s700, ...rest } = input;
  for (const [device, settings] of [['bbpos_wisepos_e', wisepos], ['stripe_s700', s700]] as const) {
    if (settings && settings.splashscreen) throw invalidRequest(`No such file upload: '${settings.splashscreen}'`, `${device}[splashscreen]`, 'resource_missing');
  }
  return rest;
}
const setupIntentSchema = z.object({ setup_intent: str, allow_redisplay: z.enum(['always', 'limited', 'unspecified']).optional(), process_config: z.record(z.string(), z.unknown()).optional(), expand }).strict();
const lineItem = z.object({ amount: int, description: str, quantity: int }).strict();
const displaySchema = z
  .object({
    type: z.literal('cart'),
    cart: z.object({ currency: str, line_items: z.union([z.array(lineItem), z.record(z.string(), lineItem).transform((o) => Object.values(o))]), tax: int.optional(), total: int }).strict().optional(),
    expand,
  })
  .strict();
const presentSchema = z
  .object({
    amount_tip: int.optional(),
    card_present: z.object({ number: str.optional() }).strict().optional(),
    card: z.object({ number: str.optional(), exp_month: int.optional(), exp_year: int.optional(), cvc: str.optional() }).strict().optional(),
    interac_present: z.object({ number: str.optional() }).strict().optional(),
    type: z.enum(['card_present', 'interac_present', 'card']).optional(),
    expand,
  })
  .strict();
const tokenSchema = z.object({ location: str.optional(), expand }).strict();
const listSchema = z.object(listParams).strict();
const expandOnly = z.object({ expand }).strict();

const refundPaymentSchema = z
  .object({
    payment_intent: str.optional(),
    charge: str.optional(),
    amount: int.optional(),
    metadata: metadata.optional(),
    reverse_transfer: bool.optional(),
    refund_application_fee: bool.optional(),
    refund_payment_config: z.unknown().optional(),
    expand,
  })
  .strict();

export function terminalRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/terminal/locations', handle(s, ({ ctx, params }) => s.locations.createLocation(ctx.scope, parse(locationCreate, params))));
  r.get('/v1/terminal/locations', handle(s, ({ ctx, params }) => s.locations.listLocations(ctx.scope, page(parse(listSchema, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/terminal/locations/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.locations.retrieveLocation(ctx.scope, String(path.id));
  }));
  r.post('/v1/terminal/locations/:id', handle(s, ({ ctx, params, path }) => s.locations.updateLocation(ctx.scope, String(path.id), parse(locationCreate, params))));
  r.delete('/v1/terminal/locations/:id', handle(s, ({ ctx, path }) => s.locations.deleteLocation(ctx.scope, String(path.id))));

  r.post('/v1/terminal/configurations', handle(s, ({ ctx, params }) => s.terminalConfigurations.createConfiguration(ctx.scope, withoutFiles(parse(configurationSchema, params)))));
  r.get('/v1/terminal/configurations', handle(s, ({ ctx, params }) => s.terminalConfigurations.listConfigurations(ctx.scope, page(parse(listSchema, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/terminal/configurations/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.terminalConfigurations.retrieveConfiguration(ctx.scope, String(path.id));
  }));
  r.post('/v1/terminal/configurations/:id', handle(s, ({ ctx, params, path }) => s.terminalConfigurations.updateConfiguration(ctx.scope, String(path.id), withoutFiles(parse(configurationSchema, params)))));
  r.delete('/v1/terminal/configurations/:id', handle(s, ({ ctx, path }) => s.terminalConfigurations.deleteConfiguration(ctx.scope, String(path.id))));

  r.post('/v1/terminal/readers', handle(s, ({ ctx, params }) => s.readers.registerReader(ctx.scope, parse(readerCreate, params))));
  r.get('/v1/terminal/readers', handle(s, ({ ctx, params }) => {
    const p = parse(readerList, params);
    return s.readers.listReaders(ctx.scope, { location: p.location, status: p.status, device_type: p.device_type, serial_number: p.serial_number }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/terminal/readers/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.readers.retrieveReader(ctx.scope, String(path.id));
  }));
  r.post('/v1/terminal/readers/:id', handle(s, ({ ctx, params, path }) => s.readers.updateReader(ctx.scope, String(path.id), parse(readerUpdate, params))));
  r.delete('/v1/terminal/readers/:id', handle(s, ({ ctx, path }) => s.readers.deleteReader(ctx.scope, String(path.id))));
  r.post('/v1/terminal/readers/:id/process_payment_intent', handle(s, ({ ctx, params, path }) => {
    const p = parse(processSchema, params);
    return s.readerActions.processPaymentIntent(ctx, String(path.id), p.payment_intent, p.process_config);
  }));
  r.post('/v1/terminal/readers/:id/process_setup_intent', handle(s, ({ ctx, params, path }) => {
    const p = parse(setupIntentSchema, params);
    s.readers.retrieveReader(ctx.scope, String(path.id));
    throw invalidRequest(`No such setupintent: '${p.setup_intent}'`, 'setup_intent', 'resource_missing');
  }));
  r.post('/v1/terminal/readers/:id/set_reader_display', handle(s, ({ ctx, params, path }) => s.readers.setReaderDisplay(ctx, String(path.id), parse(displaySchema, params))));
  r.post('/v1/terminal/readers/:id/refund_payment', handle(s, ({ ctx, params, path }) => {
    const p = parse(refundPaymentSchema, params);
    const target = { payment_intent: p.payment_intent, charge: p.charge, amount: p.amount, metadata: p.metadata === '' ? undefined : p.metadata };
    return s.readers.refundPayment(ctx, String(path.id), target, () => s.refunds.create(ctx, { payment_intent: p.payment_intent, charge: p.charge, amount: p.amount, metadata: p.metadata, reverse_transfer: p.reverse_transfer, refund_application_fee: p.refund_application_fee }));
  }));
  r.post('/v1/terminal/readers/:id/cancel_action', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.readerActions.cancelAction(ctx, String(path.id));
  }));
  r.post('/v1/test_helpers/terminal/readers/:id/present_payment_method', handle(s, ({ ctx, params, path }) => s.readerActions.presentPaymentMethod(ctx, String(path.id), parse(presentSchema, params))));
  r.post('/v1/terminal/connection_tokens', handle(s, ({ ctx, params }) => s.locations.connectionToken(ctx.scope, parse(tokenSchema, params).location)));
  return r;
}
