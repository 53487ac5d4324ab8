import type Stripe from 'stripe';
import { newSecret } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { StoredObject } from '../../store.js';
import { type Kernel, type Origin, unixSeconds } from '../kernel.js';
import { type AccountRow, collectedByStripe } from './accountTypes.js';
import type { Accounts } from './accounts.js';

/**
 * Account Links: single-use URLs of the simulator's hosted onboarding page. Opening the URL uses
 * the link up (a second visit, or one after `expires_at`, is sent to `refresh_url`, as on Stripe)
 * and starts an onboarding session for the form the page shows; the session ends when the form is
 * completed.
 */

export type AccountLinkType = 'account_onboarding' | 'account_update';
export type CollectFields = 'currently_due' | 'eventually_due';

export interface AccountLinkCreateInput {
  account: string;
  type: AccountLinkType;
  refresh_url?: string | undefined;
  return_url?: string | undefined;
  collect?: CollectFields | undefined;
  collection_options?: { fields?: CollectFields | undefined; future_requirements?: 'include' | 'omit' | undefined } | undefined;
}

interface Session {
  secret: string;
  expiresAtMs: number;
  finished: boolean;
}

export interface AccountLinkInternal {
  account: string;
  type: AccountLinkType;
  refreshUrl: string | null;
  returnUrl: string | null;
  collect: CollectFields;
  expiresAtMs: number;
  visitedAt: number | null;
  session: Session | null;
}

/** The stored link: Stripe's AccountLink has no id, so the row's id is the URL's secret token. */
type LinkBody = Stripe.AccountLink & { id: string };
export type AccountLinkRow = StoredObject<LinkBody, AccountLinkInternal>;

/**
 * 30 min: long enough to fill the form (Stripe's own onboarding sessions outlive the link's five
 * minutes), short enough that an abandoned tab cannot change the account hours later.
 */
const SESSION_TTL_MS = 30 * 60_000;

export type LinkVisit =
  | { kind: 'unknown' }
  /** Used, expired or no longer usable: where the browser goes instead (null when no refresh_url was given). */
  | { kind: 'refresh'; url: string | null }
  | { kind: 'session'; link: AccountLinkRow; account: AccountRow; secret: string };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function checkRedirectUrl(value: string, param: string, livemode: boolean): void {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalidRequest('Not a valid URL', param, 'url_invalid');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidRequest('Not a valid URL', param, 'url_invalid');
  // Stripe redirects live-mode onboarding over HTTPS only; loopback stays allowed so live mode can be exercised offline.
  if (livemode && parsed.protocol !== 'https:' && !LOOPBACK.has(parsed.hostname)) {
    throw invalidRequest('Livemode requests must always be redirected via HTTPS.', param, 'url_invalid');
  }
}

export class AccountLinks {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: Accounts,
  ) {}

  create(origin: Origin, input: AccountLinkCreateInput): Stripe.AccountLink {
    if (origin.scope.account !== null) {
      throw invalidRequest('Account Links can only be created by the platform; remove the Stripe-Account header.');
    }
    const account = this.accounts.retrieve(origin.scope, input.account);
    const livemode = origin.scope.livemode;
    if (input.refresh_url !== undefined) checkRedirectUrl(input.refresh_url, 'refresh_url', livemode);
    if (input.return_url !== undefined) checkRedirectUrl(input.return_url, 'return_url', livemode);
    if (input.type === 'account_update' && collectedByStripe(account)) {
      throw invalidRequest(
        'You cannot create `account_update` type Account Links for accounts where controller[requirement_collection]=stripe, which includes Standard and Express accounts.',
        'type',
      );
    }
    const now = this.kernel.now();
    const id = `alink_${newSecret('')}`;
    const letter = account.body.type === 'express' ? 'e' : account.body.type === 'standard' ? 's' : 'c';
    const expiresAtMs = now + this.kernel.config.accountLinkTtlMs;
    const body: LinkBody = {
      id,
      object: 'account_link',
      created: unixSeconds(now),
      expires_at: unixSeconds(expiresAtMs),
      url: `${this.kernel.config.baseUrl}/_sim/connect/setup/${letter}/${account.id}/${id}`,
    };
    this.kernel.store.insert<LinkBody, AccountLinkInternal>('account_link', { livemode, account: null }, body, {
      account: account.id,
      type: input.type,
      refreshUrl: input.refresh_url ?? null,
      returnUrl: input.return_url ?? null,
      collect: input.collection_options?.fields ?? input.collect ?? 'currently_due',
      expiresAtMs,
      visitedAt: null,
      session: null,
    });
    const { id: _token, ...link } = body;
    return link;
  }

  private find(token: string, accountId: string): AccountLinkRow | undefined {
    const row = this.kernel.store.find<LinkBody, AccountLinkInternal>(token);
    return row && row.type === 'account_link' && row.internal.account === accountId ? row : undefined;
  }

  /** A browser opens the link's URL: the first visit before `expires_at` starts a session, any other goes to refresh_url. */
  visit(token: string, accountId: string): LinkVisit {
    const row = this.find(token, accountId);
    if (!row) return { kind: 'unknown' };
    const now = this.kernel.now();
    const account = this.accounts.findConnected(row.livemode, accountId);
    if (!account || row.internal.visitedAt !== null || now >= row.internal.expiresAtMs) return { kind: 'refresh', url: row.internal.refreshUrl };
    const secret = newSecret('');
    row.internal.visitedAt = now;
    row.internal.session = { secret, expiresAtMs: now + SESSION_TTL_MS, finished: false };
    this.kernel.store.save(row);
    return { kind: 'session', link: row, account, secret };
  }

  /** A form of the page is posted: the session must be the link's, unfinished and unexpired. */
  resume(token: string, accountId: string, secret: string): LinkVisit {
    const row = this.find(token, accountId);
    if (!row) return { kind: 'unknown' };
    const session = row.internal.session;
    const account = this.accounts.findConnected(row.livemode, accountId);
    if (!account || !session || session.finished || session.secret !== secret || this.kernel.now() >= session.expiresAtMs) {
      return { kind: 'refresh', url: row.internal.refreshUrl };
    }
    return { kind: 'session', link: row, account, secret };
  }

  finish(link: AccountLinkRow): void {
    if (link.internal.session) link.internal.session.finished = true;
    this.kernel.store.save(link);
  }
}
