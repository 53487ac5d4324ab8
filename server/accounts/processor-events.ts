import type { Mode } from '../db/schema.js';
import type { ProcessorEventHandler } from '../processor/events-route.js';
import type { OnboardingService } from './onboarding.js';

/**
 * Applies the processor's `account.updated` events. A connected account's event reaches the
 * Connect endpoint naming the account (`event.account`); the platform's own account's reaches the
 * platform endpoint and is no merchant's. The account is re-read rather than taken from the event,
 * which may be late or out of order.
 */
export function accountEventHandler(onboarding: OnboardingService): ProcessorEventHandler {
  return async (event, mode: Mode) => {
    if (event.type !== 'account.updated') return;
    const account = event.account ?? (event.subject.kind === 'account' ? event.subject.id : null);
    if (account) await onboarding.onAccountEvent(account, mode);
  };
}
