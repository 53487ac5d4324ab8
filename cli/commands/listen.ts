import type { Command } from 'commander';
import { lazy } from '../lazy.js';

export interface ListenFlags {
  forwardTo?: string;
  events?: string;
  printSecret?: boolean;
}

export function registerListenCommands(program: Command): void {
  program
    .command('listen')
    .description("Stream this merchant's events (the key's mode) as they happen; with --forward-to, POST each to a local URL signed like a real delivery")
    .option('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/hooks')
    .option('--events <types>', 'comma-separated event types (families such as payment.* too); default all')
    .option('--print-secret', 'print the signing secret the forwarded events carry, and exit')
    .addHelpText('after', '\nExamples:\n  pos listen --forward-to http://localhost:3000/hooks\n  pos listen --events payment.succeeded,payment.failed')
    .action(lazy(async () => (await import('./listen-action.js')).listen));
}
