import type Stripe from 'stripe';
import { newAccountId, newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { emptyAddress, emptyRequirements, list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import type { Accounts } from './accounts.js';
import { type AccountRow, platformAccountId } from './accountTypes.js';
import { capabilityStatuses } from './capabilityState.js';
import type { AccountVerification } from './verification.js';

/**
 * What a platform does to its connected accounts beyond onboarding them: the platform's own
 * account (`GET /v1/account`), deleting and rejecting accounts, Express dashboard login links and
 * the persons of an account. Persons are kept as given; the simulator's requirements cover the
 * account's individual only, so persons never make a requirement due or satisfied.
 */

export type PersonRow = StoredObject<Stripe.Person, Record<string, never>>;

export interface PersonInput {
  first_name?: string | undefined;
  last_name?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
  dob?: { day: number; month: number; year: number } | undefined;
  address?: Record<string, string> | undefined;
  relationship?: Record<string, string | boolean | number> | undefined;
  metadata?: Metadata | '' | undefined;
}

function blankDocument(): Stripe.Person.Verification.Document {
  return { back: null, details: null, details_code: null, front: null };
}

function connectedScope(livemode: boolean, account: string): Scope {
  return { livemode, account };
}

export class AccountAdmin {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: Accounts,
    private readonly verification: AccountVerification,
  ) {}

  /** `GET /v1/account`: the connected account of `Stripe-Account`, else the platform itself. */
  current(scope: Scope): Stripe.Account {
    if (scope.account !== null) return this.accounts.retrieve(scope, scope.account).body;
    const id = platformAccountId(this.kernel.store, newAccountId);
    return {
      id,
      object: 'account',
      business_profile: { mcc: null, name: 'Simulator platform', product_description: null, support_address: null, support_email: null, support_phone: null, support_url: null, url: null } as Stripe.Account.BusinessProfile,
      business_type: 'company',
      capabilities: { card_payments: 'active', transfers: 'active' },
      charges_enabled: true,
      country: 'US',
      created: 0,
      default_currency: 'usd',
      details_submitted: true,
      email: null,
      external_accounts: list(`/v1/accounts/${id}/external_accounts`, []) as unknown as Stripe.ApiList<Stripe.BankAccount | Stripe.Card>,
      future_requirements: emptyRequirements(),
      metadata: {},
      payouts_enabled: true,
      requirements: emptyRequirements(),
      settings: null,
      tos_acceptance: { date: null, ip: null, user_agent: null },
      type: 'standard',
    } as Stripe.Account;
  }

  /**
   * Test-mode accounts can be deleted at any time; live ones only with a zero balance, as on Stripe.
   * The account's objects stay in the store but nothing can reach them any more.
   */
  remove(origin: Origin, id: string, balanceIsZero: (scope: Scope) => boolean): Stripe.DeletedAccount {
    const row = this.accounts.retrieve(origin.scope, id);
    if (row.livemode && !balanceIsZero(connectedScope(true, row.id))) {
      throw invalidRequest(`This account cannot be deleted: its balance is not zero. Pay out or reverse the remaining funds of ${row.id} first.`, 'account');
    }
    this.kernel.store.remove(row.id);
    return { id: row.id, object: 'account', deleted: true };
  }

  /** `POST /v1/accounts/:id/reject`: charges and payouts stop for good (`disabled_reason: rejected.<reason>`). */
  reject(origin: Origin, id: string, reason: 'fraud' | 'terms_of_service' | 'other'): Stripe.Account {
    const row = this.accounts.retrieve(origin.scope, id);
    if (row.body.controller?.requirement_collection === 'stripe' && row.body.controller?.stripe_dashboard?.type === 'full') {
      throw invalidRequest('Standard accounts cannot be rejected by the platform; only accounts whose losses the platform is liable for can.', 'account');
    }
    const before = structuredClone(row.body);
    const beforeCapabilities = capabilityStatuses(row);
    row.internal.rejected = reason;
    this.verification.refresh(row);
    this.kernel.store.save(row);
    this.verification.announce(origin, row, before, beforeCapabilities, []);
    return row.body;
  }

  /** `POST /v1/accounts/:id/login_links`: Express accounts only (their holders have the Express dashboard). */
  loginLink(origin: Origin, id: string): Stripe.LoginLink {
    const row = this.accounts.retrieve(origin.scope, id);
    if (row.body.controller?.stripe_dashboard?.type !== 'express') {
      throw invalidRequest('Cannot create a login link for an account that does not have access to the Express Dashboard.', 'account');
    }
    return { object: 'login_link', created: unixSeconds(this.kernel.now()), url: `${this.kernel.config.baseUrl}/_sim/express/${row.id}/${newId('ll').slice(3)}` };
  }

  private account(origin: Origin, id: string): AccountRow {
    return this.accounts.retrieve(origin.scope, id);
  }

  private getPerson(livemode: boolean, account: string, id: string): PersonRow {
    return getScoped<Stripe.Person, Record<string, never>>(this.kernel, 'person', connectedScope(livemode, account), id, 'person', 'person');
  }

  createPerson(origin: Origin, accountId: string, input: PersonInput): Stripe.Person {
    const account = this.account(origin, accountId);
    const person: Stripe.Person = {
      id: newId('person'),
      object: 'person',
      account: account.id,
      address: emptyAddress(),
      created: unixSeconds(this.kernel.now()),
      dob: { day: null, month: null, year: null },
      email: null,
      first_name: null,
      last_name: null,
      metadata: {},
      phone: null,
      relationship: { authorizer: null, director: false, executive: false, legal_guardian: null, owner: false, percent_ownership: null, representative: false, title: null },
      requirements: emptyRequirements() as Stripe.Person.Requirements,
      verification: { additional_document: blankDocument(), details: null, details_code: null, document: blankDocument(), status: 'unverified' },
    } as Stripe.Person;
    this.apply(person, input);
    this.kernel.store.insert('person', connectedScope(account.livemode, account.id), person, {});
    this.kernel.events.emit({ ...origin, scope: connectedScope(account.livemode, account.id) }, 'person.created', person);
    return person;
  }

  updatePerson(origin: Origin, accountId: string, id: string, input: PersonInput): Stripe.Person {
    const account = this.account(origin, accountId);
    const row = this.getPerson(account.livemode, account.id, id);
    this.apply(row.body, input);
    this.kernel.store.save(row);
    this.kernel.events.emit({ ...origin, scope: connectedScope(account.livemode, account.id) }, 'person.updated', row.body);
    return row.body;
  }

  retrievePerson(origin: Origin, accountId: string, id: string): Stripe.Person {
    const account = this.account(origin, accountId);
    return this.getPerson(account.livemode, account.id, id).body;
  }

  deletePerson(origin: Origin, accountId: string, id: string): Stripe.DeletedPerson {
    const account = this.account(origin, accountId);
    const row = this.getPerson(account.livemode, account.id, id);
    this.kernel.store.remove(row.id);
    this.kernel.events.emit({ ...origin, scope: connectedScope(account.livemode, account.id) }, 'person.deleted', row.body);
    return { id: row.id, object: 'person', deleted: true };
  }

  listPersons(origin: Origin, accountId: string, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Person> {
    const account = this.account(origin, accountId);
    const found = this.kernel.store.list<Stripe.Person, Record<string, never>>('person', connectedScope(account.livemode, account.id), {}, page);
    return list(`/v1/accounts/${account.id}/persons`, found.data.map((row) => row.body), found.hasMore);
  }

  private apply(person: Stripe.Person, input: PersonInput): void {
    if (input.first_name !== undefined) person.first_name = input.first_name;
    if (input.last_name !== undefined) person.last_name = input.last_name;
    if (input.email !== undefined) person.email = input.email;
    if (input.phone !== undefined) person.phone = input.phone;
    if (input.dob !== undefined) person.dob = input.dob;
    if (input.address !== undefined) person.address = { ...emptyAddress(), ...input.address };
    if (input.relationship !== undefined) person.relationship = { ...person.relationship, ...input.relationship } as Stripe.Person.Relationship;
    person.metadata = mergeMetadata(person.metadata ?? {}, input.metadata);
  }
}
