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
  'terminal.payment.succeeded',
  'terminal.payment.tipped',
  'terminal.payment.customer_canceled',
] as const;
export type Triggerable = (typeof TRIGGERABLE)[number];

/** What each trigger does, for `pos trigger --list`. */
export const TRIGGER_DOES: Record<Triggerable, string> = {
  'payment.created': 'creates a payment and leaves it open (payment)',
  'payment.succeeded': 'creates and confirms a payment with pm_card_visa (payment)',
  'payment.failed': 'creates a payment with a card that declines (payment)',
  'payment.canceled': 'creates a payment, then cancels it (payment)',
  'payment.authorized': 'confirms a manual-capture payment and leaves it uncaptured (payment)',
  'payment.refunded': 'pays with pm_card_visa, then refunds it in full (payment)',
  'dispute.created': 'pays with a card the cardholder disputes as fraudulent (payment)',
  'dispute.closed': 'a disputed payment, then winning evidence: the dispute closes won (payment)',
  'payout.paid': 'a payment available at once, paid out to a test bank account that pays (payment, payout)',
  'payout.failed': 'the same to a test bank account that fails, then the one that pays set back (payment, payout)',
  'customer.created': 'creates a customer (customer)',
  'terminal.payment.succeeded': 'a payment sent to a simulated reader and a test card tapped on it: payment.succeeded from the counter (payment)',
  'terminal.payment.tipped': 'the same with a 2.00 tip added on the reader: the payment succeeds with tip_amount (payment)',
  'terminal.payment.customer_canceled': 'a payment sent to a simulated reader, the customer presses cancel, then it is canceled: payment.canceled (payment)',
};

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerTriggerCommands(program: Command): void {
  program
    .command('trigger')
    .description('Make real test-mode activity that produces the event (and the ones before it), to exercise your webhook handler')
    .argument('[event]', TRIGGERABLE.join(' | '))
    .option('--override <path=value>', 'set a field of the objects it creates, e.g. metadata.order=42 or payment:amount=5000 (repeatable)', collect)
    .option('--add <path=value>', 'add a field it does not set, or an item to a list (repeatable)', collect)
    .option('--remove <path>', 'leave out a field it sets, e.g. description (repeatable)', collect)
    .option('--list', 'list the events it can trigger and what each one does')
    .addHelpText(
      'after',
      '\nThe objects it creates (in brackets in --list): payment, payout, customer; path=value applies to all\nof them, payment:path=value to one kind. Values are typed (numbers, true, false, null), metadata kept as strings.\n\nExamples:\n  pos trigger payment.succeeded\n  pos trigger payment.succeeded --override metadata.order=42 --override payment:amount=5000\n  pos trigger dispute.closed    # a disputed payment, then winning evidence\n  pos trigger payout.failed     # pays out to a test bank account that fails, then sets back the one that pays',
    )
    .action(lazy(async () => (await import('./trigger-action.js')).triggerEvent));
}
