import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { yesOption } from './safety-options.js';
import { allOption, limitOption, startingAfterOption } from './list-options.js';

export function registerLinkCommands(program: Command): void {
  const links = program.command('links').description('Payment links: a shareable page for an amount');
  links
    .command('create')
    .description('Create a payment link')
    .argument('<amount>', 'e.g. 47.50 or 4750c')
    .option('--currency <code>', "default: the merchant's")
    .option('--description <text>')
    .option('--email <address>', 'prefill the customer email')
    .option('--success-url <url>')
    .option('--cancel-url <url>')
    .option('--expires-in <seconds>', '300 to 7776000 (90 days)')
    .addHelpText('after', '\nExample:\n  pos links create 25.00 --description "Gift card"')
    .action(lazy(async () => (await import('./links-action.js')).createLink));
  links
    .command('list')
    .description('Payment links, newest first')
    .addOption(limitOption())
    .addOption(startingAfterOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./links-action.js')).listLinks));
  links
    .command('get')
    .description('One link by uuid or pl_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./links-action.js')).getLink));
  links
    .command('deactivate')
    .description('Stop a link from taking payments')
    .argument('<id>')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./links-action.js')).deactivateLink));
}
