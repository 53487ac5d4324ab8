import type Stripe from 'stripe';
import { invalidRequest } from '../../errors.js';
import { emptyRequirements } from '../shapes.js';
import { type AccountInternal, type AccountRow, type CapabilityState, type CapabilityStatus, KNOWN_CAPABILITIES, type Requirements, requirementsOf } from './accountTypes.js';

/** A capability's state on an account row: requesting it, reading its status, rendering it as Stripe's object. */

export function assertKnownCapability(name: string, param: string): void {
  if (!(KNOWN_CAPABILITIES as readonly string[]).includes(name)) {
    throw invalidRequest(`Received unknown parameter: ${param}`, param, 'parameter_unknown');
  }
}

/** Requests (or unrequests) a capability; `now` in Unix seconds becomes its `requested_at`. */
export function requestCapability(internal: AccountInternal, name: string, requested: boolean, now: number): void {
  const current = internal.capabilities[name];
  if (requested) {
    if (current?.requested) return;
    internal.capabilities[name] = { requested: true, requestedAt: now, status: current?.status ?? 'inactive', review: current?.review ?? null };
    return;
  }
  if (!current?.requested) return;
  internal.capabilities[name] = { requested: false, requestedAt: null, status: 'inactive', review: null };
}

export function capabilityStatus(row: AccountRow, name: string): CapabilityStatus {
  return row.internal.capabilities[name]?.status ?? 'inactive';
}

/** Every capability's status, to tell after a change which ones moved. */
export function capabilityStatuses(row: AccountRow): Record<string, CapabilityStatus> {
  return Object.fromEntries(Object.entries(row.internal.capabilities).map(([name, state]) => [name, state.status]));
}

function capabilityObject(accountId: string, name: string, state: CapabilityState | undefined, requirements: Requirements): Stripe.Capability {
  const applies = state?.requested === true;
  return {
    id: name,
    object: 'capability',
    account: accountId,
    future_requirements: emptyRequirements(),
    requested: state?.requested ?? false,
    requested_at: state?.requestedAt ?? null,
    requirements: applies ? structuredClone(requirements) : emptyRequirements(),
    status: state?.status ?? 'inactive',
  };
}

export function capabilityOf(row: AccountRow, name: string): Stripe.Capability {
  return capabilityObject(row.id, name, row.internal.capabilities[name], requirementsOf(row.body));
}

/**
 * A direct charge (or one on behalf of the account) needs the account's `card_payments` capability
 * active; Stripe refuses it otherwise, with these messages.
 */
export function assertCanCharge(row: AccountRow): void {
  const state = row.internal.capabilities.card_payments;
  if (!state?.requested && state?.status !== 'active') {
    throw invalidRequest('You cannot create a charge on a connected account without the `card_payments` capability enabled.');
  }
  if (state.status !== 'active') {
    throw invalidRequest(
      `Your account cannot currently make charges. To find out why charge creation is currently disabled, look at the \`requirements.disabled_reason\` property on this account (/v1/accounts/${row.id}).`,
    );
  }
}
