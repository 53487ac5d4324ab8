import type Stripe from 'stripe';
import { newId, newSecret } from '../../ids.js';
import { missingParam, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, getScoped } from '../kernel.js';
import { emptyAddress, list, type ListEnvelope, mergeMetadata } from '../shapes.js';
import type { Configurations } from './configurations.js';
import { type LocationInput, type LocationRow, isDeleted } from './types.js';

/** Terminal locations, and the connection tokens a reader's SDK asks for (scoped to a location or not). */
export class Locations {
  constructor(
    private readonly kernel: Kernel,
    private readonly configurations: Configurations,
  ) {}

  createLocation(scope: Scope, input: LocationInput): Stripe.Terminal.Location {
    if (!input.display_name) throw missingParam('display_name');
    if (!input.address) throw missingParam('address');
    if (!input.address.country) throw missingParam('address[country]');
    const address = emptyAddress();
    for (const key of ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const) address[key] = input.address[key] ?? null;
    const location: Stripe.Terminal.Location = {
      id: newId('tml'),
      object: 'terminal.location',
      address,
      display_name: input.display_name,
      livemode: scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
    };
    if (input.configuration_overrides) location.configuration_overrides = this.configurations.configuration(scope, input.configuration_overrides, 'configuration_overrides').id;
    return this.kernel.store.insert<Stripe.Terminal.Location, Record<string, never>>('terminal.location', scope, location, {}).body;
  }

  private location(scope: Scope, id: string, allowDeleted = false): LocationRow {
    const row = getScoped<Stripe.Terminal.Location, Record<string, never>>(this.kernel, 'terminal.location', scope, id, 'terminal.location', 'location');
    if (!allowDeleted && isDeleted(row.body)) throw resourceMissing('terminal.location', id, 'location');
    return row;
  }

  retrieveLocation(scope: Scope, id: string): Stripe.Terminal.Location | Stripe.Terminal.DeletedLocation {
    return this.location(scope, id, true).body;
  }

  updateLocation(scope: Scope, id: string, input: LocationInput): Stripe.Terminal.Location {
    const row = this.location(scope, id);
    if (input.display_name !== undefined) row.body.display_name = input.display_name;
    if (input.address) {
      for (const key of ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const) {
        const value = input.address[key];
        if (value !== undefined) row.body.address[key] = value === '' ? null : value;
      }
    }
    if (input.configuration_overrides !== undefined) {
      if (input.configuration_overrides === '') delete row.body.configuration_overrides;
      else row.body.configuration_overrides = this.configurations.configuration(scope, input.configuration_overrides, 'configuration_overrides').id;
    }
    row.body.metadata = mergeMetadata(row.body.metadata, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteLocation(scope: Scope, id: string): Stripe.Terminal.DeletedLocation {
    const row = this.location(scope, id);
    const stub: Stripe.Terminal.DeletedLocation = { id: row.id, object: 'terminal.location', deleted: true };
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listLocations(scope: Scope, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Terminal.Location> {
    const result = this.kernel.store.list<Stripe.Terminal.Location, Record<string, never>>('terminal.location', scope, { deleted: null }, page);
    return list('/v1/terminal/locations', result.data.map((row) => row.body), result.hasMore);
  }

  connectionToken(scope: Scope, location: string | undefined): Stripe.Terminal.ConnectionToken {
    if (location !== undefined) this.location(scope, location);
    const token: Stripe.Terminal.ConnectionToken = { object: 'terminal.connection_token', secret: newSecret(scope.livemode ? 'pst_live_' : 'pst_test_') };
    if (location !== undefined) token.location = location;
    return token;
  }
}
