import type { RequestHandler } from 'express';
import type { Scope } from '../accounts/scope.js';
import { isCashBody } from './live-money.js';
import { scopeOf } from './middleware.js';

/** What a live create needs of the merchant's connected account (server/accounts/onboarding.ts). */
export interface AccountReadiness {
  requireCharges(scope: Scope): Promise<void>;
  requirePayouts(scope: Scope): Promise<void>;
}

/**
 * Mounted on the creates that take money (payments, terminal payments, checkout sessions, payment
 * links) or pay it out: a live merchant whose account cannot yet do that is refused with a 400
 * naming what is missing, before the body is read into anything or the processor is called.
 * Test mode passes (its accounts are ready at once), and so does a cash sale: no processor and no
 * connected account take part in it.
 */
export function accountReadinessGate(readiness: AccountReadiness, need: 'charges' | 'payouts'): RequestHandler {
  return async (req, _res, next) => {
    // Mounted with `use` on each path: its create is the POST to the mount point itself.
    if (req.method !== 'POST' || req.path !== '/') return next();
    const scope = scopeOf(req);
    if (scope.mode !== 'live' || (need === 'charges' && isCashBody(req.body))) return next();
    await (need === 'charges' ? readiness.requireCharges(scope) : readiness.requirePayouts(scope));
    next();
  };
}
