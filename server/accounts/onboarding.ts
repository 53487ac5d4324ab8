import type { Logger } from 'pino';
import { toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { ApiError, invalid } from '../errors.js';
import { fromProcessorError } from '../processor/errors.js';
import type { ConnectPort } from '../processor/port.js';
import { accountStateColumns, type AccountState, type ConnectedAccountDirectory, stateOfAccount, stateOfRow } from './connected-accounts.js';
import type { AccountStateView, OnboardingLinkInput, OnboardingLinkView } from '../../shared/contract/merchant.js';
import { recordEvent } from '../webhooks/outbox.js';
import type { Scope } from './scope.js';

export type OnboardingStatus = 'complete' | 'action_required' | 'pending_verification' | 'rejected';

/**
 * How long a connected account's state is trusted before `GET /v1/merchant` reads it again when
 * no event came: 5 minutes while onboarding is unfinished (a merchant who just finished looks
 * again soon), a day once complete (`account.updated` events say when that changes). Either way
 * a merchant costs at most one processor read per interval, well inside Stripe's rate limits.
 */
export const STALE_UNFINISHED_MS = 5 * 60_000;
export const STALE_COMPLETE_MS = 24 * 3_600_000;
/**
 * A live payment refused for an account that cannot charge re-reads the account first when its
 * state is older than this, so a merchant whose onboarding just finished is not refused until an
 * event arrives; 60 s caps those reads at one a minute per merchant however often it retries.
 */
export const RECHECK_REFUSED_MS = 60_000;

/** Requirement keys (Stripe's, with the person prefix dropped) in words a merchant understands. */
const REQUIREMENT_WORDS: [RegExp, string][] = [
  [/^company\.(owners|directors|executives)_provided$/, 'the business owners and directors'],
  [/^(owners|directors|executives)\./, 'the business owners and directors'],
  [/^(.*\.)?dob(\.|$)/, 'date of birth'],
  [/^(.*\.)?(first_name|last_name)$/, 'legal name'],
  [/^(individual|representative|person)\.address(\.|$)/, 'home address'],
  [/^company\.address(\.|$)/, 'business address'],
  [/^(.*\.)?ssn_last_4$/, 'last 4 digits of the SSN'],
  [/^(.*\.)?id_number$/, 'ID number'],
  [/^(.*\.)?verification\.additional_document$/, 'proof of address'],
  [/^(.*\.)?verification\.document$/, 'an identity document'],
  [/^(individual|representative|person)\.email$/, 'email address'],
  [/^(individual|representative|person)\.phone$/, 'phone number'],
  [/^(.*\.)?relationship\.title$/, 'job title'],
  [/^company\.name$/, 'business name'],
  [/^company\.tax_id$/, 'business tax ID'],
  [/^company\.phone$/, 'business phone number'],
  [/^business_profile\.mcc$/, 'business category'],
  [/^business_profile\.url$/, 'business website'],
  [/^business_profile\.product_description$/, 'product description'],
  [/^business_type$/, 'business type'],
  [/^external_account$/, 'bank account'],
  [/^tos_acceptance\./, "acceptance of Stripe's terms"],
  [/^settings\.payments\.statement_descriptor$/, 'statement descriptor'],
];

/** `person_1AbC.dob.day` and `representative.dob.day` read like `individual.dob.day`. */
function requirementWords(key: string): string {
  const normalised = key.replace(/^person_[A-Za-z0-9]+\./, 'person.');
  for (const [pattern, words] of REQUIREMENT_WORDS) if (pattern.test(normalised)) return words;
  return key;
}

/** Each requirement once, in words, in the processor's order. */
export function describeRequirements(keys: readonly string[]): string[] {
  return [...new Set(keys.map(requirementWords))];
}

function due(state: AccountState): string[] {
  return [...new Set([...state.requirements.past_due, ...state.requirements.currently_due])];
}

export function onboardingStatus(state: AccountState): OnboardingStatus {
  if (state.requirements.disabled_reason?.startsWith('rejected')) return 'rejected';
  if (due(state).length > 0 || state.requirements.errors.length > 0) return 'action_required';
  if (state.chargesEnabled && state.payoutsEnabled) return 'complete';
  return 'pending_verification';
}

/** One sentence a merchant can act on. */
export function onboardingMessage(state: AccountState): string {
  const status = onboardingStatus(state);
  const r = state.requirements;
  if (status === 'complete') return 'Onboarding is complete: the account can take payments and receive payouts.';
  if (status === 'rejected') return `Stripe rejected this account (${r.disabled_reason?.replace(/^rejected\./, '') ?? 'rejected'}); it cannot take payments.`;
  if (status === 'pending_verification') return 'Stripe is verifying the details submitted; nothing more is needed now.';
  const words = describeRequirements(due(state));
  const failed = describeRequirements(r.errors.map((e) => e.requirement));
  const parts: string[] = [];
  if (words.length > 0) parts.push(`Stripe needs: ${words.join(', ')}`);
  if (failed.length > 0) parts.push(`could not be verified: ${failed.join(', ')}`);
  const deadline = r.current_deadline !== null ? ` (by ${toIsoTimestamp(r.current_deadline * 1000).slice(0, 10)})` : '';
  return `${parts.join('; ')}${deadline}.`;
}

export function accountStateView(state: AccountState): AccountStateView {
  const r = state.requirements;
  return {
    charges_enabled: state.chargesEnabled,
    payouts_enabled: state.payoutsEnabled,
    requirements: {
      currently_due: r.currently_due,
      past_due: r.past_due,
      eventually_due: r.eventually_due,
      pending_verification: r.pending_verification,
      current_deadline: r.current_deadline !== null ? toIsoTimestamp(r.current_deadline * 1000) : null,
      disabled_reason: r.disabled_reason,
      errors: r.errors,
    },
    onboarding: {
      status: onboardingStatus(state),
      message: onboardingMessage(state),
      account_type: state.accountType,
      details_submitted: state.detailsSubmitted,
    },
  };
}

/** The merchant fields a `merchant.updated` event carries besides the account's state. */
interface MerchantHeader {
  id: string;
  business_name: string;
  country: string;
}

/**
 * The merchant's connected account as the processor reports it: whether it may charge and pay out
 * and what onboarding still needs. Kept per merchant and mode, re-read on the processor's
 * `account.updated` events (the event's own copy may be stale or out of order, so the account is
 * read again, as disputes and payouts are) and now and then on `GET /v1/merchant`. A change the
 * merchant can see writes `merchant.updated` to the outbox in the same transaction.
 */
export class OnboardingService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: ConnectPort,
    private readonly accounts: ConnectedAccountDirectory,
    private readonly logger: Logger,
    /** This server's public base URL, for the default return and refresh pages. */
    private readonly publicUrl: () => string,
  ) {}

  /** The state as stored; null when the account was never read (or not made yet). */
  async stored(merchantId: string, mode: Mode): Promise<AccountState | null> {
    const row = await this.store.db.selectFrom('processor_accounts').selectAll().where('merchant_id', '=', merchantId).where('mode', '=', mode).executeTakeFirst();
    return row ? stateOfRow(row) : null;
  }

  /**
   * The state for `GET /v1/merchant`: as stored while fresh, read again when stale. A stale state
   * is shown as it is when the processor cannot be reached; a state never read cannot be.
   */
  async current(scope: Scope): Promise<AccountState> {
    const stored = await this.stored(scope.merchantId, scope.mode);
    const now = this.clock.now();
    if (stored) {
      const maxAge = onboardingStatus(stored) === 'complete' ? STALE_COMPLETE_MS : STALE_UNFINISHED_MS;
      if (now - stored.syncedAt < maxAge) return stored;
      try {
        return await this.refresh(scope.merchantId, scope.mode);
      } catch (err) {
        this.logger.warn({ err, merchant_id: scope.merchantId, mode: scope.mode }, 'connected account could not be re-read; showing its last known state');
        return stored;
      }
    }
    return this.refresh(scope.merchantId, scope.mode);
  }

  /**
   * Reads the account from the processor and stores what it says. A read older than the one
   * stored (two refreshes racing) changes nothing. Answers the state stored afterwards.
   */
  async refresh(merchantId: string, mode: Mode): Promise<AccountState> {
    const startedAt = this.clock.now();
    let fresh: AccountState;
    let accountId: string;
    try {
      accountId = await this.accounts.accountOf(merchantId, mode);
      fresh = stateOfAccount(await this.processor.retrieveAccount({ mode }, accountId), startedAt);
    } catch (err) {
      throw fromProcessorError(err);
    }
    return this.store.transaction(async (trx) => {
      const row = await trx
        .selectFrom('processor_accounts')
        .selectAll()
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', mode)
        .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) {
        // Not recorded (a row removed by hand, say): the first read is the first state.
        await trx
          .insertInto('processor_accounts')
          .values({ merchant_id: merchantId, mode, account_id: accountId, created_at: startedAt, account_type: fresh.accountType, ...accountStateColumns(fresh) })
          .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doNothing())
          .execute();
        return fresh;
      }
      const before = stateOfRow(row);
      if (before && before.syncedAt > startedAt) return before;
      await trx
        .updateTable('processor_accounts')
        .set({ account_type: fresh.accountType ?? row.account_type, ...accountStateColumns(fresh) })
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', mode)
        .execute();
      // An account never read before (made before its state was kept) has no change to report.
      const view = accountStateView(fresh);
      const previous = before ? accountStateView(before) : null;
      if (previous !== null && visibleChanges(previous, view).length > 0) {
        const merchant = await trx.selectFrom('merchants').select(['id', 'business_name', 'country']).where('id', '=', merchantId).executeTakeFirstOrThrow();
        await recordEvent(trx, { merchantId, mode }, 'merchant.updated', merchantId, merchantUpdatedData(merchant, row.account_id, view, previous), this.clock.now());
      }
      return fresh;
    });
  }

  /** An `account.updated` event from the processor: the account is read again if it is a merchant's. */
  async onAccountEvent(account: string, mode: Mode): Promise<void> {
    const merchantId = await this.accounts.merchantOf(mode, account);
    if (!merchantId) return;
    await this.refresh(merchantId, mode);
  }

  /**
   * Live payments need an account that can charge; test mode never checks (its accounts are made
   * ready at once). Throws a 400 saying what is missing, before anything is written or sent.
   */
  async requireCharges(scope: Scope): Promise<void> {
    if (scope.mode !== 'live') return;
    const state = await this.#freshEnoughToRefuse(scope, (s) => s.chargesEnabled);
    if (!state.chargesEnabled) throw notReady('charges', state, scope.merchantId);
  }

  /** Live payouts need an account that can pay out. */
  async requirePayouts(scope: Scope): Promise<void> {
    if (scope.mode !== 'live') return;
    const state = await this.#freshEnoughToRefuse(scope, (s) => s.payoutsEnabled);
    if (!state.payoutsEnabled) throw notReady('payouts', state, scope.merchantId);
  }

  async #freshEnoughToRefuse(scope: Scope, ok: (state: AccountState) => boolean): Promise<AccountState> {
    const stored = await this.stored(scope.merchantId, scope.mode);
    if (stored && (ok(stored) || this.clock.now() - stored.syncedAt < RECHECK_REFUSED_MS)) return stored;
    return this.refresh(scope.merchantId, scope.mode);
  }

  /** A single-use link to the processor's hosted onboarding for the merchant's account in this mode. */
  async onboardingLink(scope: Scope, input: OnboardingLinkInput): Promise<OnboardingLinkView> {
    const base = this.publicUrl();
    try {
      const account = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
      const link = await this.processor.createAccountLink(scope, {
        account,
        returnUrl: input.return_url ?? `${base}/onboarding/return`,
        refreshUrl: input.refresh_url ?? `${base}/onboarding/refresh`,
      });
      return { object: 'onboarding_link', url: link.url, expires_at: toIsoTimestamp(link.expiresAt) };
    } catch (err) {
      throw fromProcessorError(err);
    }
  }
}

/** The fields of the account's view whose change a `merchant.updated` event reports. */
function visibleChanges(before: AccountStateView, after: AccountStateView): (keyof AccountStateView)[] {
  return (['charges_enabled', 'payouts_enabled', 'requirements', 'onboarding'] as const).filter((key) => {
    if (key === 'onboarding') return before.onboarding.status !== after.onboarding.status || before.onboarding.message !== after.onboarding.message || before.onboarding.details_submitted !== after.onboarding.details_submitted;
    return JSON.stringify(before[key]) !== JSON.stringify(after[key]);
  });
}

/** Like Stripe's `previous_attributes`: the changed fields as they were. */
function merchantUpdatedData(merchant: MerchantHeader, accountId: string, view: AccountStateView, previous: AccountStateView): Record<string, unknown> {
  const previousAttributes: Record<string, unknown> = {};
  for (const key of visibleChanges(previous, view)) previousAttributes[key] = previous[key];
  return { id: merchant.id, object: 'merchant', business_name: merchant.business_name, country: merchant.country, connected_account_id: accountId, ...view, previous_attributes: previousAttributes };
}

function notReady(what: 'charges' | 'payouts', state: AccountState, merchantId: string): ApiError {
  const status = onboardingStatus(state);
  const doing = what === 'charges' ? 'take live payments' : 'pay out';
  const next =
    status === 'action_required'
      ? ` Send the merchant through onboarding: POST /v1/merchant/onboarding-link with its live key, or \`pos admin merchant onboard ${merchantId} --mode live\`.`
      : '';
  return invalid(undefined, `This merchant's live account cannot ${doing} yet. ${onboardingMessage(state)}${next}`, what === 'charges' ? 'charges_not_enabled' : 'payouts_not_enabled');
}
