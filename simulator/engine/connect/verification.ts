import type Stripe from 'stripe';
import { type Kernel, type Origin, systemOrigin } from '../kernel.js';
import { emptyRequirements } from '../shapes.js';
import { type AccountInternal, type AccountRow, type CapabilityStatus, REVIEWED_CAPABILITIES, requirementsOf } from './accountTypes.js';
import { capabilityOf, capabilityStatuses } from './capabilityState.js';
import { dobString } from './identity.js';
import { URL_ALTERNATIVE, businessKind, isVerifiedField, requiredFields, verifiesImmediately, verify } from './requirements.js';

/**
 * An account's requirements and what follows from them. A new account has requirements due
 * (requirements.ts) and its capabilities stay `inactive` until nothing is due; submitted identity
 * fields are `pending_verification` for the verification delay and then verified or failed by
 * Stripe's test values. Every change of requirements, capabilities or the enabled flags is an
 * `account.updated` (and `capability.updated`) Connect event.
 */
export class AccountVerification {
  constructor(private readonly kernel: Kernel) {}

  /** Timer: Stripe's verification of the submitted identity fields comes back. */
  completeVerification(raw: unknown): void {
    const payload = raw as { account: string; apiVersion: string };
    const row = this.kernel.store.find<Stripe.Account, AccountInternal>(payload.account);
    if (!row || row.type !== 'account' || !row.internal.onboarding) return;
    row.internal.onboarding.verificationTimerId = null;
    const before = structuredClone(row.body);
    const beforeCapabilities = capabilityStatuses(row);
    this.runVerification(row);
    const origin = systemOrigin({ livemode: row.livemode, account: null }, payload.apiVersion);
    this.settle(origin, row);
    this.announce(origin, row, before, beforeCapabilities, []);
  }

  accountOrigin(origin: Origin, row: AccountRow): Origin {
    return { ...origin, scope: { livemode: row.livemode, account: row.id } };
  }

  /**
   * Connect events for a change: `capability.updated` for each capability whose status changed (or
   * that was named in the request), then `account.updated` with the top-level fields that changed
   * in `previous_attributes`, if any did.
   */
  announce(origin: Origin, row: AccountRow, before: Stripe.Account, beforeCapabilities: Record<string, CapabilityStatus>, named: string[]): void {
    const accountOrigin = this.accountOrigin(origin, row);
    for (const name of Object.keys(row.internal.capabilities)) {
      if (named.includes(name) || beforeCapabilities[name] !== row.internal.capabilities[name]?.status) {
        this.kernel.events.emit(accountOrigin, 'capability.updated', capabilityOf(row, name));
      }
    }
    const previous: Record<string, unknown> = {};
    const now = row.body as unknown as Record<string, unknown>;
    const old = before as unknown as Record<string, unknown>;
    for (const key of Object.keys(now)) {
      if (JSON.stringify(now[key]) !== JSON.stringify(old[key])) previous[key] = old[key] ?? null;
    }
    if (Object.keys(previous).length > 0) this.kernel.events.emit(accountOrigin, 'account.updated', row.body, previous);
  }

  /**
   * Starts verification of newly submitted fields (at once for Stripe's immediate test values,
   * else after the verification delay), re-renders and saves.
   */
  settle(origin: Origin, row: AccountRow): void {
    this.refresh(row);
    const onboarding = row.internal.onboarding;
    if (onboarding) {
      const pending = Object.entries(onboarding.pending);
      const dob = dobString(row.body.individual);
      if (pending.some(([field, value]) => verifiesImmediately(field, value, dob))) {
        this.runVerification(row);
        this.refresh(row);
      } else if (pending.length > 0 && onboarding.verificationTimerId === null) {
        onboarding.verificationTimerId = this.kernel.timers.schedule('account_verification', this.kernel.now() + this.kernel.config.verificationDelayMs, {
          account: row.id,
          apiVersion: origin.apiVersion,
        });
      }
    }
    this.kernel.store.save(row);
  }

  private runVerification(row: AccountRow): void {
    const onboarding = row.internal.onboarding;
    if (!onboarding) return;
    if (onboarding.verificationTimerId) {
      this.kernel.timers.cancel(onboarding.verificationTimerId);
      onboarding.verificationTimerId = null;
    }
    const dob = dobString(row.body.individual);
    for (const [field, value] of Object.entries(onboarding.pending)) {
      const outcome = verify({ field, value, dob, livemode: row.livemode });
      if (outcome.result === 'failed') {
        onboarding.failed[field] = { value, code: outcome.code, reason: outcome.reason };
        delete onboarding.verified[field];
      } else {
        if (outcome.result === 'listed') onboarding.listed = true;
        onboarding.verified[field] = value;
        delete onboarding.failed[field];
      }
    }
    onboarding.pending = {};
  }

  /** The value of a requirement on the account, or null when it is missing. */
  private valueOf(row: AccountRow, field: string): string | null {
    const onboarding = row.internal.onboarding;
    const body = row.body;
    const text = (value: unknown): string | null => (value === null || value === undefined || value === '' ? null : String(value));
    switch (field) {
      case 'external_account':
        return (body.external_accounts?.data.length ?? 0) > 0 ? 'provided' : null;
      case 'business_profile.url':
        return text(body.business_profile?.url) ?? text(body.business_profile?.product_description);
      case 'individual.id_number':
        return onboarding?.idNumber ?? null;
      case 'individual.ssn_last_4':
        return onboarding?.ssnLast4 ?? onboarding?.idNumber?.slice(-4) ?? null;
      case 'company.tax_id':
        return onboarding?.taxId ?? null;
      default: {
        let value: unknown = body;
        for (const part of field.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
        return text(value);
      }
    }
  }

  /**
   * Recomputes requirements, capability statuses and the enabled flags from what the account holds.
   * A verified field whose value changed is submitted again (pending), a failed one stays due with
   * its error until it changes.
   */
  refresh(row: AccountRow): void {
    const onboarding = row.internal.onboarding;
    const body = row.body;
    const requirements = emptyRequirements();
    if (onboarding) {
      const country = body.country ?? 'US';
      const kind = businessKind(body.business_type);
      const currentlyDue: string[] = [];
      const missing: string[] = [];
      const fields = requiredFields(country, kind);
      // A full id number given where only the SSN's last four are due is verified as the id number.
      const fullId = kind === 'individual' && onboarding.idNumber !== null && !fields.includes('individual.id_number');
      if (fullId) fields.push('individual.id_number');
      for (const field of fields) {
        const value = this.valueOf(row, field);
        if (value === null) {
          currentlyDue.push(field);
          missing.push(field);
          continue;
        }
        if (!isVerifiedField(field) || (fullId && field === 'individual.ssn_last_4')) continue;
        const failed = onboarding.failed[field];
        if (failed && failed.value === value) {
          currentlyDue.push(field);
          requirements.errors.push({ code: failed.code, reason: failed.reason, requirement: field });
          continue;
        }
        if (failed) delete onboarding.failed[field];
        if (onboarding.verified[field] === value) continue;
        onboarding.pending[field] = value;
      }
      for (const field of Object.keys(onboarding.pending)) {
        if (!fields.includes(field) || this.valueOf(row, field) === null) delete onboarding.pending[field];
      }
      requirements.currently_due = currentlyDue;
      requirements.past_due = [...currentlyDue];
      const eventually = new Set(currentlyDue);
      // Stripe asks US individuals for the full SSN eventually (after a volume threshold).
      if (country === 'US' && kind === 'individual' && !onboarding.idNumber) eventually.add('individual.id_number');
      requirements.eventually_due = [...eventually].sort();
      requirements.pending_verification = Object.keys(onboarding.pending).sort();
      if (currentlyDue.includes('business_profile.url')) requirements.alternatives = [structuredClone(URL_ALTERNATIVE)];
      requirements.disabled_reason = onboarding.listed
        ? 'listed'
        : currentlyDue.length > 0
          ? 'requirements.past_due'
          : requirements.pending_verification.length > 0
            ? 'requirements.pending_verification'
            : null;
      body.details_submitted = missing.length === 0;
      body.requirements = requirements;
      this.renderPerson(row, fields);
    }
    if (row.internal.rejected) requirements.disabled_reason = `rejected.${row.internal.rejected}`;
    const blocked = requirements.disabled_reason !== null;
    const pendingOnly = requirements.disabled_reason === 'requirements.pending_verification';
    const capabilities: Record<string, CapabilityStatus> = {};
    for (const [name, state] of Object.entries(row.internal.capabilities)) {
      let status: CapabilityStatus;
      if (state.review) status = state.review;
      else if (!state.requested) status = 'inactive';
      else if (!onboarding) status = state.status;
      else if (blocked) status = pendingOnly ? 'pending' : 'inactive';
      else status = REVIEWED_CAPABILITIES.has(name) ? 'pending' : 'active';
      state.status = status;
      if (state.requested || status === 'active') capabilities[name] = status;
    }
    body.capabilities = capabilities as Stripe.Account.Capabilities;
    body.requirements = requirements;
    body.charges_enabled = capabilities.card_payments === 'active';
    body.payouts_enabled = onboarding ? !blocked : capabilities.transfers === 'active';
    if (!onboarding) body.details_submitted = true;
  }

  private renderPerson(row: AccountRow, fields: string[]): void {
    const onboarding = row.internal.onboarding;
    const person = row.body.individual;
    if (!onboarding || !person) return;
    const prefix = 'individual.';
    const strip = (fields: string[]): string[] => fields.filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length));
    const requirements = requirementsOf(row.body);
    const personRequirements = {
      alternatives: [],
      currently_due: strip(requirements.currently_due),
      errors: requirements.errors.filter((e) => e.requirement.startsWith(prefix)).map((e) => ({ ...e, requirement: e.requirement.slice(prefix.length) })),
      eventually_due: strip(requirements.eventually_due),
      past_due: strip(requirements.past_due),
      pending_verification: strip(requirements.pending_verification),
    };
    person.requirements = personRequirements as Stripe.Person.Requirements;
    person.id_number_provided = onboarding.idNumber !== null;
    person.ssn_last_4_provided = onboarding.ssnLast4 !== null || onboarding.idNumber !== null;
    const identity = fields.filter((f) => f.startsWith(prefix) && isVerifiedField(f) && !(f === 'individual.ssn_last_4' && onboarding.idNumber !== null));
    const status = identity.length > 0 && identity.every((f) => onboarding.verified[f] !== undefined && onboarding.failed[f] === undefined)
      ? 'verified'
      : personRequirements.pending_verification.length > 0
        ? 'pending'
        : 'unverified';
    if (person.verification) person.verification.status = status;
  }
}
