import { type Command, Option } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';
import { liveOption, yesOption } from './safety-options.js';

export function registerPayoutCommands(program: Command): void {
  program
    .command('balance')
    .description("The shop's balance: available to pay out now, and pending")
    .action(lazy(async () => (await import('./payouts-action.js')).showBalance));

  const payouts = program.command('payouts').description('Payouts to the shop’s bank account');
  payouts
    .command('list')
    .description('Payouts, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'in_transit', 'paid', 'failed', 'canceled']))
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./payouts-action.js')).listPayouts));
  payouts
    .command('get')
    .description('One payout by uuid or po_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./payouts-action.js')).getPayout));
  payouts
    .command('create')
    .description('Pay out to the bank account now')
    .argument('[amount]', 'e.g. 250.00 or 25000c (default: all that is available)')
    .option('--currency <code>', "default: the merchant's")
    .option('--description <text>')
    .addOption(yesOption())
    .addOption(liveOption())
    .addHelpText('after', '\nExamples:\n  pos payouts create --yes\n  pos payouts create 250.00 --description "Weekly takings"')
    .action(lazy(async () => (await import('./payouts-action.js')).createPayout));
  payouts
    .command('bank-account')
    .description('Show the bank account payouts go to, or set it with --account-number')
    .option('--account-number <number>', 'the account number (or IBAN); test mode: 000123456789 pays, 000111111116 fails')
    .option('--routing-number <number>', 'routing number (US), sort code (GB), BSB (AU)')
    .option('--holder <name>', 'account holder name')
    .addHelpText('after', '\nExample:\n  pos payouts bank-account --account-number 000123456789 --routing-number 110000000')
    .action(lazy(async () => (await import('./payouts-action.js')).bankAccount));
}
