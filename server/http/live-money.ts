import type { RequestHandler } from 'express';
import { ApiError, invalid } from '../errors.js';

/**
 * What live mode means on this server: `real` on Stripe; `simulated` on the simulator started
 * with `--simulate-live` (development and tests: every live page and receipt says so); and
 * `unavailable` on the simulator otherwise, where a live payment would only pretend to move money.
 */
export type LiveMoney = 'real' | 'simulated' | 'unavailable';

export function liveMoneyOf(processorKind: 'simulator' | 'stripe', simulateLive: boolean): LiveMoney {
  if (processorKind === 'stripe') return 'real';
  return simulateLive ? 'simulated' : 'unavailable';
}

export function liveModeUnavailable(): ApiError {
  return invalid(
    undefined,
    'Live mode is unavailable: this server runs on the payment simulator, which moves no real money. Run `pos server --processor stripe` with live Stripe keys to take live payments (or `--simulate-live` to try live mode on the simulator).',
    'live_mode_unavailable',
  );
}

/**
 * Mounted in front of the routes that create or move money (payments and their capture, cancel
 * and refunds, terminal payments, checkout sessions, payment links, payouts): a live-mode key's writes
 * there are refused before anything is written when live mode is `unavailable`. Reads pass.
 */
export function liveMoneyGate(liveMoney: LiveMoney): RequestHandler {
  return (req, _res, next) => {
    if (liveMoney === 'unavailable' && req.principal?.mode === 'live' && req.method !== 'GET' && req.method !== 'HEAD' && !isCashSale(req.path, req.method, req.body)) return next(liveModeUnavailable());
    next();
  };
}

/**
 * A cash sale's create: real money in a real drawer that no processor touches, so it is as real on
 * the simulator as on Stripe and passes the gate (docs/api-choices.md). Its refunds stay behind the
 * gate: which payment a refund is of is not known before its route reads it.
 */
function isCashSale(path: string, method: string, body: unknown): boolean {
  return method === 'POST' && path === '/' && isCashBody(body);
}

/** A create body asking for a cash sale (the schema checks the rest when the route parses it). */
export function isCashBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { payment_method_type?: unknown }).payment_method_type === 'cash';
}
