import type { Command } from 'commander';
import { ioOf } from '../io.js';
import { addApiOptions, type ApiFlags } from './api-options.js';

export interface ListenFlags extends ApiFlags {
  forwardTo?: string;
  events?: string;
  printSecret?: boolean;
}

export function registerListenCommands(program: Command): void {
  addApiOptions(
    program
      .command('listen')
      .description("Stream this merchant's events (the key's mode) as they happen; with --forward-to, POST each to a local URL signed like a real delivery")
      .option('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/hooks')
      .option('--events <types>', 'comma-separated event types (families such as payment.* too); default all')
      .option('--print-secret', 'print the signing secret the forwarded events carry, and exit'),
  )
    .addHelpText('after', '\nExamples:\n  pos listen --forward-to http://localhost:3000/hooks\n  pos listen --events payment.succeeded,payment.failed')
    .action(async (_options: ListenFlags, command: Command) => {
      // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
      const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<ListenFlags>(), ioOf(command));
      const { listenAction } = await import('./listen-action.js');
      await listenAction(options, ioOf(command));
    });
}
