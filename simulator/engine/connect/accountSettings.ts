import type Stripe from 'stripe';
import { invalidRequest } from '../../errors.js';
import { DEFAULT_DELAY_DAYS } from '../ledger.js';
import type { AccountCreateInput, ControllerInput, PayoutScheduleInput } from './accountTypes.js';
import { countryRules } from './requirements.js';

/** An account's type and controller, its default settings and its payout schedule. */

/** A new account's default currency is its country's, as Stripe sets it. */
export function currencyOf(country: string): string {
  return countryRules(country)?.currency ?? 'usd';
}

export function defaultSettings(): Stripe.Account.Settings {
  return {
    bacs_debit_payments: { display_name: null, service_user_number: null },
    branding: { icon: null, logo: null, primary_color: null, secondary_color: null },
    card_issuing: { tos_acceptance: { date: null, ip: null } },
    card_payments: {
      decline_on: { avs_failure: false, cvc_failure: false },
      statement_descriptor_prefix: null,
      statement_descriptor_prefix_kana: null,
      statement_descriptor_prefix_kanji: null,
    },
    dashboard: { display_name: null, timezone: 'Etc/UTC' },
    invoices: { default_account_tax_ids: null, hosted_payment_method_save: null },
    payments: {
      statement_descriptor: null,
      statement_descriptor_kana: null,
      statement_descriptor_kanji: null,
      statement_descriptor_prefix_kana: null,
      statement_descriptor_prefix_kanji: null,
    },
    payouts: { debit_negative_balances: true, schedule: { delay_days: 2, interval: 'daily' }, statement_descriptor: null },
    sepa_debit_payments: {},
  } as Stripe.Account.Settings;
}

/**
 * Stripe's controller properties for each account type, and the type that controller properties
 * stand for (`none` when they match no classic type).
 */
export function resolveController(type: AccountCreateInput['type'], input: ControllerInput | undefined): { type: Stripe.Account.Type; controller: Stripe.Account.Controller } {
  if (type && input) throw invalidRequest('You cannot specify both `type` and `controller`.', 'controller');
  let collection: 'application' | 'stripe';
  let dashboard: 'express' | 'full' | 'none';
  let payer: string;
  let losses: 'application' | 'stripe';
  if (input) {
    collection = input.requirement_collection ?? 'stripe';
    dashboard = input.stripe_dashboard?.type ?? (collection === 'application' ? 'none' : 'full');
    payer = input.fees?.payer ?? (dashboard === 'full' ? 'account' : 'application');
    losses = input.losses?.payments ?? (dashboard === 'full' ? 'stripe' : 'application');
    if (collection === 'application' && dashboard !== 'none') {
      throw invalidRequest('controller[requirement_collection]=application is only supported with controller[stripe_dashboard][type]=none.', 'controller[requirement_collection]');
    }
  } else {
    const chosen = type ?? 'custom';
    collection = chosen === 'custom' ? 'application' : 'stripe';
    dashboard = chosen === 'custom' ? 'none' : chosen === 'express' ? 'express' : 'full';
    payer = chosen === 'standard' ? 'account' : chosen === 'express' ? 'application_express' : 'application_custom';
    losses = chosen === 'standard' ? 'stripe' : 'application';
  }
  const resolved: Stripe.Account.Type =
    type ?? (collection === 'application' ? 'custom' : dashboard === 'express' ? 'express' : dashboard === 'full' ? 'standard' : 'none');
  return {
    type: resolved,
    controller: {
      fees: { payer },
      is_controller: true,
      losses: { payments: losses },
      requirement_collection: collection,
      stripe_dashboard: { type: dashboard },
      type: 'application',
    } as Stripe.Account.Controller,
  };
}

/**
 * The payout schedules the simulator runs: `daily` (Stripe's default) and `manual`. Weekly and
 * monthly anchors are refused rather than silently run daily.
 */
export function applySchedule(settings: Stripe.Account.Settings, input: PayoutScheduleInput | undefined): void {
  if (!input || !settings.payouts) return;
  const schedule = settings.payouts.schedule;
  if (input.interval !== undefined) {
    if (input.interval !== 'daily' && input.interval !== 'manual') {
      throw invalidRequest(
        `The simulator runs daily and manual payout schedules only, not ${input.interval}.`,
        'settings[payouts][schedule][interval]',
        'parameter_invalid',
      );
    }
    schedule.interval = input.interval;
  }
  if (input.delay_days !== undefined) {
    const days = input.delay_days === 'minimum' ? DEFAULT_DELAY_DAYS : input.delay_days;
    if (days < DEFAULT_DELAY_DAYS) {
      throw invalidRequest(
        `delay_days must be at least ${DEFAULT_DELAY_DAYS}, the minimum for US accounts (or 'minimum').`,
        'settings[payouts][schedule][delay_days]',
        'parameter_invalid',
      );
    }
    schedule.delay_days = days;
  }
}
