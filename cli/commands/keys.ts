import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { yesOption } from './safety-options.js';
import { wholeListAllOption } from './list-options.js';

export function registerKeyCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description("The merchant's API keys: restricted keys (rk_) for the shop PC, reporting or webhooks; needs the secret key")
    .addHelpText(
      'after',
      '\nPermissions are <resource>:read or <resource>:write (write includes read); presets: counter, reporting, webhooks.\nThe list and why: docs/api-choices.md (Restricted keys).',
    );
  keys
    .command('create')
    .description('Create a restricted key of the secret key’s mode; the key is printed once')
    .requiredOption('--name <name>', 'what the key is for, e.g. "Till 1 PC"')
    .option('--scope <a,b,…>', 'permissions, comma-separated, e.g. terminal:write,transactions:read')
    .option('--preset <name>', 'counter, reporting or webhooks (joined with --scope when both are given)')
    .addHelpText('after', '\nExamples:\n  pos keys create --name "Till 1 PC" --preset counter\n  pos keys create --name "Accounting" --scope transactions:read,refunds:read,payouts:read --json')
    .action(lazy(async () => (await import('./keys-action.js')).createKey));
  keys
    .command('list')
    .description("This mode's keys by their last four characters: secret, publishable and restricted, with status")
    .addOption(wholeListAllOption())
    .action(lazy(async () => (await import('./keys-action.js')).listKeys));
  keys
    .command('roll')
    .description('A new key with the same permissions; the old one keeps working for the grace period')
    .argument('<id>', "the key's id (pos keys list)")
    .option('--grace-hours <h>', 'how long the old key keeps working, 0 to 168', '24')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./keys-action.js')).rollKey));
  keys
    .command('revoke')
    .description('Stop a restricted key at once: every request with it is refused (401) from now on')
    .argument('<id>', "the key's id (pos keys list)")
    .addOption(yesOption())
    .action(lazy(async () => (await import('./keys-action.js')).revokeKey));
}
