import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import type { Scope } from './scope.js';
import { unpackJson } from '../db/packed-json.js';
import { describeRequirements, RECHECK_REFUSED_MS, STALE_COMPLETE_MS, STALE_UNFINISHED_MS } from './onboarding.js';

const UNFINISHED = {
  type: 'express' as const,
  chargesEnabled: false,
  payoutsEnabled: false,
  detailsSubmitted: false,
  currentlyDue: ['individual.dob.day', 'individual.dob.month', 'individual.dob.year', 'external_account', 'tos_acceptance.date'],
  pastDue: [],
  disabledReason: 'requirements.past_due',
};

describe("merchants' connected accounts and onboarding, on the in-memory processor", () => {
  let d: Domain;
  let live: Scope;
  let liveAccount: string;

  beforeEach(async () => {
    d = await openDomain();
    live = { merchantId: d.scope.merchantId, mode: 'live' };
    liveAccount = await unreadAccount('live');
  });
  afterEach(async () => {
    await d.close();
  });

  /**
   * The merchant's account in `mode`, made on the processor but with no state of it kept, as for
   * an account made before its state was kept: the first read of it is its first known state.
   */
  async function unreadAccount(mode: 'test' | 'live'): Promise<string> {
    const account = await d.services.connectedAccounts.accountOf(d.scope.merchantId, mode);
    await d.store.db.updateTable('processor_accounts').set({ synced_at: null, charges_enabled: null }).where('account_id', '=', account).execute();
    return account;
  }

  async function merchantEvents(mode: 'test' | 'live') {
    const rows = await d.store.db.selectFrom('events').select(['type', 'data']).where('type', '=', 'merchant.updated').where('mode', '=', mode).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(unpackJson(r.data)) as Record<string, unknown>);
  }

  it('shows a ready account as complete, in words', async () => {
    const view = await d.services.merchants.describe(d.scope);
    expect(view).toMatchObject({
      charges_enabled: true,
      payouts_enabled: true,
      requirements: { currently_due: [], past_due: [], current_deadline: null, disabled_reason: null, errors: [] },
      onboarding: { status: 'complete', details_submitted: true },
    });
    expect(view.onboarding.message).toMatch(/complete/);
  });

  it('refuses a live payment while charges are not enabled, naming what is missing; test mode is never checked', async () => {
    d.processor.setAccountState(liveAccount, UNFINISHED);
    const testAccount = await unreadAccount('test');
    d.processor.setAccountState(testAccount, UNFINISHED);
    await expect(d.services.onboarding.requireCharges(d.scope)).resolves.toBeUndefined();
    const refusal = d.services.onboarding.requireCharges(live);
    await expect(refusal).rejects.toMatchObject({ status: 400, type: 'invalid_request_error', code: 'charges_not_enabled' });
    await expect(d.services.onboarding.requireCharges(live)).rejects.toThrow(/Stripe needs: date of birth, bank account, acceptance of Stripe's terms/);
    await expect(d.services.onboarding.requirePayouts(live)).rejects.toMatchObject({ status: 400, code: 'payouts_not_enabled' });
  });

  it('re-reads a refused account at most once a minute, so a finished onboarding is let through without an event', async () => {
    d.processor.setAccountState(liveAccount, UNFINISHED);
    await expect(d.services.onboarding.requireCharges(live)).rejects.toMatchObject({ code: 'charges_not_enabled' });
    const reads = d.processor.count('retrieveAccount');
    d.processor.setAccountState(liveAccount, { chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true, currentlyDue: [], disabledReason: null });
    await expect(d.services.onboarding.requireCharges(live)).rejects.toMatchObject({ code: 'charges_not_enabled' });
    expect(d.processor.count('retrieveAccount')).toBe(reads);
    d.clock.advance(RECHECK_REFUSED_MS);
    await expect(d.services.onboarding.requireCharges(live)).resolves.toBeUndefined();
    expect(d.processor.count('retrieveAccount')).toBe(reads + 1);
    await d.services.onboarding.requireCharges(live);
    expect(d.processor.count('retrieveAccount')).toBe(reads + 1);
  });

  it('writes merchant.updated once when the account changes, with what it was, and never for no change', async () => {
    d.processor.setAccountState(liveAccount, UNFINISHED);
    await d.services.onboarding.refresh(live.merchantId, 'live');
    expect(await merchantEvents('live')).toEqual([]);
    d.processor.setAccountState(liveAccount, { chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true, currentlyDue: [], disabledReason: null });
    await d.services.onboarding.onAccountEvent(liveAccount, 'live');
    await d.services.onboarding.onAccountEvent(liveAccount, 'live');
    const events = await merchantEvents('live');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: live.merchantId,
      object: 'merchant',
      connected_account_id: liveAccount,
      charges_enabled: true,
      payouts_enabled: true,
      onboarding: { status: 'complete' },
      is_test: false,
      previous_attributes: { charges_enabled: false, payouts_enabled: false, onboarding: expect.objectContaining({ status: 'action_required' }) },
    });
    expect(await merchantEvents('test')).toEqual([]);
  });

  it('ignores account events for accounts that are no merchant’s', async () => {
    await d.services.onboarding.onAccountEvent('acct_platform', 'live');
    expect(d.processor.count('retrieveAccount')).toBe(0);
  });

  it('keeps a failed verification visible in words, and charges disabled', async () => {
    d.processor.setAccountState(liveAccount, {
      ...UNFINISHED,
      currentlyDue: ['individual.id_number'],
      errors: [{ requirement: 'individual.id_number', code: 'verification_failed_id_number_match', reason: 'The ID number provided could not be verified.' }],
      currentDeadline: Math.floor(Date.UTC(2026, 11, 1) / 1000),
    });
    const view = await d.services.merchants.describe(live);
    expect(view.charges_enabled).toBe(false);
    expect(view.onboarding.status).toBe('action_required');
    expect(view.onboarding.message).toBe('Stripe needs: ID number; could not be verified: ID number (by 2026-12-01).');
    expect(view.requirements.current_deadline).toBe('2026-12-01T00:00:00.000+00:00');
    expect(view.requirements.errors).toEqual([{ requirement: 'individual.id_number', code: 'verification_failed_id_number_match', reason: 'The ID number provided could not be verified.' }]);
  });

  it('tells pending verification and rejection apart from missing details', async () => {
    d.processor.setAccountState(liveAccount, { ...UNFINISHED, currentlyDue: [], pendingVerification: ['individual.dob.day'], disabledReason: 'requirements.pending_verification', detailsSubmitted: true });
    expect((await d.services.merchants.describe(live)).onboarding.status).toBe('pending_verification');
    d.processor.setAccountState(liveAccount, { ...UNFINISHED, currentlyDue: [], disabledReason: 'rejected.fraud' });
    await d.services.onboarding.refresh(live.merchantId, 'live');
    const view = await d.services.merchants.describe(live);
    expect(view.onboarding).toMatchObject({ status: 'rejected', message: 'Stripe rejected this account (fraud); it cannot take payments.' });
  });

  it('reads the account again on GET only when its state is stale', async () => {
    d.processor.setAccountState(liveAccount, UNFINISHED);
    await d.services.merchants.describe(live);
    await d.services.merchants.describe(live);
    expect(d.processor.count('retrieveAccount')).toBe(1);
    d.clock.advance(STALE_UNFINISHED_MS);
    await d.services.merchants.describe(live);
    expect(d.processor.count('retrieveAccount')).toBe(2);
    d.processor.setAccountState(liveAccount, { chargesEnabled: true, payoutsEnabled: true, currentlyDue: [], disabledReason: null });
    d.clock.advance(STALE_UNFINISHED_MS);
    await d.services.merchants.describe(live);
    d.clock.advance(STALE_UNFINISHED_MS);
    await d.services.merchants.describe(live);
    expect(d.processor.count('retrieveAccount')).toBe(3);
    d.clock.advance(STALE_COMPLETE_MS);
    await d.services.merchants.describe(live);
    expect(d.processor.count('retrieveAccount')).toBe(4);
  });

  it("shows the last known state when a stale account cannot be re-read, and fails when there is none", async () => {
    await d.services.merchants.describe(live);
    d.clock.advance(STALE_COMPLETE_MS);
    d.processor.failNext('retrieveAccount', new Error('connection reset'));
    expect((await d.services.merchants.describe(live)).charges_enabled).toBe(true);
    await unreadAccount('test');
    d.processor.failNext('retrieveAccount', new Error('connection reset'));
    await expect(d.services.merchants.describe(d.scope)).rejects.toThrow();
  });

  it("makes onboarding links that come back to this server's pages unless told otherwise", async () => {
    const link = await d.services.onboarding.onboardingLink(live, {});
    expect(link).toMatchObject({ object: 'onboarding_link', url: expect.stringMatching(/^https:\/\//) });
    expect(Date.parse(link.expires_at)).toBeGreaterThan(0);
    await d.services.onboarding.onboardingLink(live, { return_url: 'https://platform.example/done', refresh_url: 'https://platform.example/again' });
    expect(d.processor.accountLinks).toEqual([
      { mode: 'live', account: liveAccount, returnUrl: 'http://pos.test/onboarding/return', refreshUrl: 'http://pos.test/onboarding/refresh' },
      { mode: 'live', account: liveAccount, returnUrl: 'https://platform.example/done', refreshUrl: 'https://platform.example/again' },
    ]);
  });

  it("says Stripe's requirement keys in words, each once", () => {
    expect(
      describeRequirements([
        'business_profile.url',
        'person_1AbCdE.dob.day',
        'representative.dob.month',
        'company.tax_id',
        'individual.verification.document',
        'owners.first_name',
        'settings.unknown_thing',
      ]),
    ).toEqual(['business website', 'date of birth', 'business tax ID', 'an identity document', 'the business owners and directors', 'settings.unknown_thing']);
  });
});
