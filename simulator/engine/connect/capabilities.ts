import type Stripe from 'stripe';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, getAny, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope } from '../shapes.js';
import { type AccountInternal, type CapabilityStatus, platformScope } from './accountTypes.js';
import type { Accounts } from './accounts.js';
import { assertKnownCapability, capabilityOf, capabilityStatuses } from './capabilityState.js';
import type { AccountVerification } from './verification.js';

/** `/v1/accounts/:id/capabilities` and Stripe's review of a capability (the control API). */
export class Capabilities {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: Accounts,
    private readonly verification: AccountVerification,
  ) {}

  listCapabilities(scope: Scope, id: string): ListEnvelope<Stripe.Capability> {
    const row = this.accounts.retrieve(scope, id);
    const data = Object.entries(row.internal.capabilities)
      .filter(([, state]) => state.requested || state.status === 'active')
      .map(([name]) => capabilityOf(row, name));
    return list(`/v1/accounts/${id}/capabilities`, data);
  }

  retrieveCapability(scope: Scope, id: string, name: string): Stripe.Capability {
    const row = this.accounts.retrieve(scope, id);
    assertKnownCapability(name, 'capability');
    return capabilityOf(row, name);
  }

  updateCapability(origin: Origin, id: string, name: string, requested: boolean | undefined): Stripe.Capability {
    assertKnownCapability(name, 'capability');
    if (requested !== undefined) this.accounts.update(origin, id, { capabilities: { [name]: { requested } } });
    return capabilityOf(this.accounts.retrieve(origin.scope, id), name);
  }

  /** Control API: what Stripe's review decides, whatever the requirements say. */
  setCapabilityStatus(origin: Origin, id: string, name: string, status: CapabilityStatus): Stripe.Capability {
    const row = getAny<Stripe.Account, AccountInternal>(this.kernel, 'account', id, 'account');
    assertKnownCapability(name, 'capability');
    const before = structuredClone(row.body);
    const current = row.internal.capabilities[name];
    row.internal.capabilities[name] = {
      requested: current?.requested ?? status !== 'inactive',
      requestedAt: current?.requestedAt ?? unixSeconds(this.kernel.now()),
      status: current?.status ?? 'inactive',
      review: status,
    };
    const beforeCapabilities = capabilityStatuses(row);
    const scoped = { ...origin, scope: platformScope({ livemode: row.livemode, account: null }) };
    this.verification.settle(scoped, row);
    this.verification.announce(scoped, row, before, beforeCapabilities, [name]);
    return capabilityOf(row, name);
  }
}
