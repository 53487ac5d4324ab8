import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { SimError, invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, getScoped } from '../kernel.js';
import { list, type ListEnvelope } from '../shapes.js';
import { MAX_TIP_OPTIONS, MAX_TIP_PERCENTAGE } from '../../../shared/tipping.js';
import { type ConfigurationInput, type ConfigurationRow, type ReaderRow, type TippingInput, isDeleted } from './types.js';

/**
 * Stripe's checks on a configuration's tipping: at most three percentages (whole numbers 1–100) and
 * three fixed amounts (positive minor units) per currency, a non-negative smart-tip threshold, and a
 * currency code for each entry.
 */
function validTipping(tipping: Record<string, TippingInput>): Stripe.Terminal.Configuration.Tipping {
  const out: Record<string, TippingInput> = {};
  for (const [currency, config] of Object.entries(tipping)) {
    const at = `tipping[${currency}]`;
    if (!/^[a-z]{3}$/.test(currency)) throw invalidRequest(`Invalid currency: ${currency}.`, 'tipping', 'parameter_invalid');
    const percentages = config.percentages ?? [];
    const fixed = config.fixed_amounts ?? [];
    if (percentages.length > MAX_TIP_OPTIONS) throw invalidRequest(`You can specify at most ${MAX_TIP_OPTIONS} tip percentages.`, `${at}[percentages]`);
    if (fixed.length > MAX_TIP_OPTIONS) throw invalidRequest(`You can specify at most ${MAX_TIP_OPTIONS} fixed tip amounts.`, `${at}[fixed_amounts]`);
    if (percentages.some((p) => !Number.isInteger(p) || p < 1 || p > MAX_TIP_PERCENTAGE)) {
      throw invalidRequest(`Tip percentages must be integers in the range 1% to ${MAX_TIP_PERCENTAGE}%.`, `${at}[percentages]`);
    }
    if (fixed.some((a) => !Number.isInteger(a) || a < 1)) throw invalidRequest('Fixed tip amounts must be positive integers.', `${at}[fixed_amounts]`);
    if (config.smart_tip_threshold !== undefined && (!Number.isInteger(config.smart_tip_threshold) || config.smart_tip_threshold < 0)) {
      throw invalidRequest('The smart tip threshold must be a non-negative integer.', `${at}[smart_tip_threshold]`);
    }
    out[currency] = {
      ...(config.fixed_amounts ? { fixed_amounts: [...fixed] } : {}),
      ...(config.percentages ? { percentages: [...percentages] } : {}),
      ...(config.smart_tip_threshold !== undefined ? { smart_tip_threshold: config.smart_tip_threshold } : {}),
    };
  }
  return out as Stripe.Terminal.Configuration.Tipping;
}

/** Terminal configurations: only what a reader's screen uses, tipping. */
export class Configurations {
  constructor(private readonly kernel: Kernel) {}

  createConfiguration(scope: Scope, input: ConfigurationInput): Stripe.Terminal.Configuration {
    const configuration = {
      id: newId('tmc'),
      object: 'terminal.configuration',
      is_account_default: false,
      livemode: scope.livemode,
      name: input.name ?? null,
    } as Stripe.Terminal.Configuration;
    if (input.tipping) configuration.tipping = validTipping(input.tipping);
    return this.kernel.store.insert<Stripe.Terminal.Configuration, Record<string, never>>('terminal.configuration', scope, configuration, {}).body;
  }

  /** A configuration another object names (a location's `configuration_overrides`): Stripe answers 400, not 404. */
  configuration(scope: Scope, id: string, param = 'configuration', allowDeleted = false): ConfigurationRow {
    const found = this.kernel.store.find<Stripe.Terminal.Configuration, Record<string, never>>(id);
    if (!found || found.type !== 'terminal.configuration' || found.livemode !== scope.livemode || found.account !== scope.account || (!allowDeleted && isDeleted(found.body))) {
      throw new SimError(400, 'invalid_request_error', `No such terminal configuration: '${id}'`, { code: 'resource_missing', param });
    }
    return found;
  }

  retrieveConfiguration(scope: Scope, id: string): Stripe.Terminal.Configuration | Stripe.Terminal.DeletedConfiguration {
    return getScoped<Stripe.Terminal.Configuration, Record<string, never>>(this.kernel, 'terminal.configuration', scope, id, 'terminal.configuration', 'configuration').body;
  }

  updateConfiguration(scope: Scope, id: string, input: ConfigurationInput): Stripe.Terminal.Configuration {
    const row = this.configuration(scope, id);
    if (input.name !== undefined) row.body.name = input.name;
    if (input.tipping === '') delete row.body.tipping;
    else if (input.tipping) row.body.tipping = validTipping(input.tipping);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteConfiguration(scope: Scope, id: string): Stripe.Terminal.DeletedConfiguration {
    const row = this.configuration(scope, id);
    const stub: Stripe.Terminal.DeletedConfiguration = { id: row.id, object: 'terminal.configuration', deleted: true };
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listConfigurations(scope: Scope, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Terminal.Configuration> {
    const result = this.kernel.store.list<Stripe.Terminal.Configuration, Record<string, never>>('terminal.configuration', scope, { deleted: null }, page);
    return list('/v1/terminal/configurations', result.data.map((row) => row.body), result.hasMore);
  }

  /** The tipping a reader's location configures for a currency, if any. */
  tippingFor(reader: ReaderRow, currency: string): TippingInput | undefined {
    const locationId = typeof reader.body.location === 'string' ? reader.body.location : reader.body.location?.id;
    if (!locationId) return undefined;
    const location = this.kernel.store.find<Stripe.Terminal.Location, Record<string, never>>(locationId);
    const configId = location && !isDeleted(location.body) ? location.body.configuration_overrides : undefined;
    if (!configId) return undefined;
    const config = this.kernel.store.find<Stripe.Terminal.Configuration, Record<string, never>>(configId);
    if (!config || isDeleted(config.body)) return undefined;
    const perCurrency = config.body.tipping as Record<string, TippingInput | undefined> | undefined;
    return perCurrency?.[currency];
  }
}
