import type { Command } from 'commander';
import { lazy } from '../lazy.js';

/** Events `pos trigger` can cause, each by real test-mode activity going through the processor. */
export const TRIGGERABLE = [
  'payment.created',
  'payment.succeeded',
  'payment.failed',
  'payment.canceled',
  'payment.authorized',
  'payment.refunded',
  'dispute.created',
  'dispute.closed',
  'payout.paid',
  'payout.failed',
  'customer.created',
] as const;
export type Triggerable = (typeof TRIGGERABLE)[number];

export function registerTriggerCommands(program: Command): void {
  program
    .command('trigger')
    .description('Make real test-mode activity that produces the event (and the ones before it), to exercise your webhook handler')
    .argument('<event>', TRIGGERABLE.join(' | '))
    .addHelpText(
      'after',
      '\nExamples:\n  pos trigger payment.succeeded\n  pos trigger dispute.closed    # a disputed payment, then winning evidence\n  pos trigger payout.failed     # pays out to a test bank account that fails, then sets back the one that pays',
    )
    .action(lazy(async () => (await import('./trigger-action.js')).triggerEvent));
}
