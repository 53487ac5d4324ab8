import type { Command } from 'commander';
import { ioOf } from '../io.js';
import { addApiOptions, type ApiFlags } from './api-options.js';

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
  addApiOptions(
    program
      .command('trigger')
      .description('Make real test-mode activity that produces the event (and the ones before it), to exercise your webhook handler')
      .argument('<event>', TRIGGERABLE.join(' | '))
      .option('--json', 'print the object (payment, dispute, payout or customer) as JSON'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  pos trigger payment.succeeded\n  pos trigger dispute.closed    # a disputed payment, then winning evidence\n  pos trigger payout.failed     # pays out to a test bank account that fails, then sets back the one that pays',
    )
    .action(async (event: string, _options: ApiFlags & { json?: boolean }, command: Command) => {
      // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
      const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<ApiFlags & { json?: boolean }>(), ioOf(command));
      const { triggerAction } = await import('./trigger-action.js');
      await triggerAction(event, options, ioOf(command));
    });
}
