import type { Command } from 'commander';
import { addApiOptions, type ApiFlags } from './api-options.js';

/** Events `pos trigger` can cause, each by a real test payment going through the processor. */
export const TRIGGERABLE = ['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.authorized', 'payment.refunded'] as const;
export type Triggerable = (typeof TRIGGERABLE)[number];

export function registerTriggerCommands(program: Command): void {
  addApiOptions(
    program
      .command('trigger')
      .description('Make a real test-mode payment that produces the event (and the ones before it), to exercise your webhook handler')
      .argument('<event>', TRIGGERABLE.join(' | '))
      .option('--json', 'print the payment as JSON'),
  )
    .addHelpText('after', '\nExample:\n  pos trigger payment.succeeded')
    .action(async (event: string, _options: ApiFlags & { json?: boolean }, command: Command) => {
      // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
      const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<ApiFlags & { json?: boolean }>());
      const { triggerAction } = await import('./trigger-action.js');
      await triggerAction(event, options);
    });
}
