import type Stripe from 'stripe';
import { newAccountId, newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { emptyRequirements, list, type ListEnvelope, mergeMetadata } from '../shapes.js';
import {
  type AccountCreateInput,
  type AccountInternal,
  type AccountRow,
  type AccountUpdateInput,
  PLATFORM,
  type Submitter,
  platformScope,
  requirementsOf,
} from './accountTypes.js';
import { applySchedule, currencyOf, defaultSettings, resolveController } from './accountSettings.js';
import type { BankAccounts, ExternalAccountInput } from './bankAccounts.js';
import { assertKnownCapability, capabilityOf, capabilityStatuses, requestCapability } from './capabilityState.js';
import { applyIdentity, blankProfile } from './identity.js';
import { COUNTRY_RULES, countryRules } from './requirements.js';
import type { AccountVerification } from './verification.js';

/**
 * Connect accounts: creation, update, retrieval and their external accounts. What the account
 * holder gives is checked in identity.ts; requirements, verification and the events that tell of
 * them are verification.ts's; capabilities are capabilities.ts's.
 */
export class Accounts {
  constructor(
    private readonly kernel: Kernel,
    private readonly bankAccounts: BankAccounts,
    private readonly verification: AccountVerification,
  ) {}

  create(origin: Origin, input: AccountCreateInput): Stripe.Account {
    if (origin.scope.account !== null) {
      throw invalidRequest('Connected accounts can only be created by the platform; remove the Stripe-Account header.');
    }
    const country = (input.country ?? 'US').toUpperCase();
    if (!countryRules(country)) {
      throw invalidRequest(`Country '${input.country ?? ''}' is unknown or not supported by the simulator (it onboards accounts in ${Object.keys(COUNTRY_RULES).join(', ')}).`, 'country', 'country_unsupported');
    }
    const { type, controller } = resolveController(input.type, input.controller);
    const id = newAccountId();
    const created = unixSeconds(this.kernel.now());
    const internal: AccountInternal = {
      capabilities: {},
      onboarding: { idNumber: null, ssnLast4: null, taxId: null, verified: {}, pending: {}, failed: {}, listed: false, verificationTimerId: null, personId: newId('person') },
    };
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      assertKnownCapability(name, `capabilities[${name}]`);
      if (value.requested) requestCapability(internal, name, true, created);
    }
    const defaultCurrency = input.default_currency?.toLowerCase() ?? currencyOf(country);
    if (!/^[a-z]{3}$/.test(defaultCurrency)) throw invalidRequest(`Invalid currency: ${input.default_currency ?? ''}.`, 'default_currency', 'parameter_invalid');
    const draft: Stripe.Account = {
      id,
      object: 'account',
      business_profile: blankProfile(),
      business_type: null,
      capabilities: {},
      charges_enabled: false,
      controller,
      country,
      created,
      default_currency: defaultCurrency,
      details_submitted: false,
      email: null,
      external_accounts: list(`/v1/accounts/${id}/external_accounts`, []) as unknown as Stripe.ApiList<Stripe.BankAccount | Stripe.Card>,
      future_requirements: emptyRequirements(),
      metadata: mergeMetadata({}, input.metadata),
      payouts_enabled: false,
      requirements: emptyRequirements(),
      settings: defaultSettings(),
      tos_acceptance: { date: null, ip: null, user_agent: null },
      type,
    };
    const row: AccountRow = { seq: 0, id, type: 'account', livemode: origin.scope.livemode, account: null, body: draft, internal };
    applyIdentity(row, input, PLATFORM, this.kernel.now());
    if (draft.settings) applySchedule(draft.settings, input.settings?.payouts?.schedule);
    this.verification.refresh(row);
    const stored = this.kernel.store.insert<Stripe.Account, AccountInternal>('account', platformScope(origin.scope), row.body, row.internal);
    if (input.external_account !== undefined) {
      this.bankAccounts.create(origin, id, { external_account: input.external_account });
      Object.assign(stored, this.kernel.store.find<Stripe.Account, AccountInternal>(id));
    }
    this.verification.settle(origin, stored);
    // Stripe announces each requested capability of a new account, and the account with them.
    const requested = Object.entries(stored.internal.capabilities).filter(([, state]) => state.requested).map(([name]) => name);
    const accountOrigin = this.verification.accountOrigin(origin, stored);
    for (const name of requested) this.kernel.events.emit(accountOrigin, 'capability.updated', capabilityOf(stored, name));
    if (requested.length > 0) this.kernel.events.emit(accountOrigin, 'account.updated', stored.body);
    return stored.body;
  }

  retrieve(scope: Scope, id: string): AccountRow {
    if (scope.account !== null && scope.account !== id) {
      throw invalidRequest(`The account '${id}' is not reachable with Stripe-Account '${scope.account}'.`, 'account', 'account_invalid');
    }
    return getScoped<Stripe.Account, AccountInternal>(this.kernel, 'account', platformScope(scope), id, 'account', 'account');
  }

  /**
   * The account of a `Stripe-Account` header, a destination or `on_behalf_of`, if it exists in that
   * mode. Read it, never change it: it is the store's until the account is written (`Store.peek`).
   */
  findConnected(livemode: boolean, id: string): AccountRow | undefined {
    const row = this.kernel.store.peek<Stripe.Account, AccountInternal>(id);
    return row && row.type === 'account' && row.livemode === livemode ? row : undefined;
  }

  update(origin: Origin, id: string, input: AccountUpdateInput, submitter: Submitter = PLATFORM): Stripe.Account {
    const row = this.retrieve(origin.scope, id);
    const before = structuredClone(row.body);
    const beforeCapabilities = capabilityStatuses(row);
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      assertKnownCapability(name, `capabilities[${name}]`);
      if (value.requested !== undefined) requestCapability(row.internal, name, value.requested, unixSeconds(this.kernel.now()));
    }
    applyIdentity(row, input, submitter, this.kernel.now());
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    if (row.body.settings) applySchedule(row.body.settings, input.settings?.payouts?.schedule);
    this.kernel.store.save(row);
    if (input.external_account !== undefined) {
      this.bankAccounts.create(origin, row.id, { external_account: input.external_account });
      Object.assign(row, this.kernel.store.find<Stripe.Account, AccountInternal>(row.id));
    }
    this.verification.settle(origin, row);
    this.verification.announce(origin, row, before, beforeCapabilities, Object.keys(input.capabilities ?? {}));
    return row.body;
  }

  /** `POST /v1/accounts/:id/external_accounts`: the bank account may satisfy the `external_account` requirement. */
  addExternalAccount(origin: Origin, id: string, input: ExternalAccountInput): Stripe.BankAccount | Stripe.Card {
    const row = this.retrieve(origin.scope, id);
    const before = structuredClone(row.body);
    const beforeCapabilities = capabilityStatuses(row);
    const bank = this.bankAccounts.create(origin, row.id, input);
    Object.assign(row, this.kernel.store.find<Stripe.Account, AccountInternal>(row.id));
    this.verification.settle(origin, row);
    this.verification.announce(origin, row, before, beforeCapabilities, []);
    return bank;
  }

  list(scope: Scope, limit: number, startingAfter?: string, endingBefore?: string): ListEnvelope<Stripe.Account> {
    const page = this.kernel.store.list<Stripe.Account, AccountInternal>('account', platformScope(scope), {}, { limit, startingAfter, endingBefore });
    return list('/v1/accounts', page.data.map((row) => row.body), page.hasMore);
  }

  /** Fields due on the account now (for the hosted onboarding page). */
  due(row: AccountRow, eventually: boolean): string[] {
    const requirements = requirementsOf(row.body);
    return [...(eventually ? requirements.eventually_due : requirements.currently_due)];
  }

}
