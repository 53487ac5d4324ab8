import type { Command } from 'commander';
import { lazy } from '../lazy.js';

export function registerCheckoutCommands(program: Command): void {
  const checkout = program.command('checkout').description('Hosted checkout sessions');
  checkout
    .command('create')
    .description('Create a hosted checkout session and print its URL')
    .argument('<amount>', 'e.g. 47.50 or 4750c')
    .option('--currency <code>', "default: the merchant's")
    .option('--description <text>')
    .option('--email <address>', 'prefill the customer email')
    .option('--name <name>', 'prefill the customer name')
    .option('--success-url <url>')
    .option('--cancel-url <url>')
    .option('--expires-in <seconds>', '300 to 86400')
    .action(lazy(async () => (await import('./checkout-action.js')).createCheckout));
  checkout
    .command('get')
    .description('One session by uuid or cs_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./checkout-action.js')).getCheckout));
}
