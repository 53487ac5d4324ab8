import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { wholeListAllOption } from './list-options.js';
import { yesOption } from './safety-options.js';

export function registerTerminalCommands(program: Command): void {
  const readers = program.command('readers').description('Card readers of the key’s mode, and the agents’ printers and displays');
  readers
    .command('list', { isDefault: true })
    .description('Readers with presence (online/offline, last seen), then the receipt printers and customer displays')
    .addOption(wholeListAllOption())
    .action(lazy(async () => (await import('./terminal-action.js')).listReaders));
  readers
    .command('register')
    .description('Register a reader (test mode: --code simulated-wpe)')
    .requiredOption('--name <name>', 'what staff call it, e.g. "Till 1"')
    .requiredOption('--code <code>', "registration code from the reader's screen, or simulated-wpe")
    .option('--location <uuid>', "location id (default: the merchant's first in this mode)")
    .addHelpText('after', '\nExample:\n  pos readers register --name "Till 1" --code simulated-wpe')
    .action(lazy(async () => (await import('./terminal-action.js')).registerReader));
  readers
    .command('delete')
    .description('Delete a reader')
    .argument('<reader>', 'name, tmr_… id or uuid')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./terminal-action.js')).deleteReader));

  const locations = program.command('locations').description('Shop locations readers attach to');
  locations
    .command('create')
    .description('Create a location')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--line1 <line>', 'street address')
    .option('--line2 <line>')
    .requiredOption('--city <city>')
    .option('--state <state>')
    .requiredOption('--postal-code <code>')
    .requiredOption('--country <cc>', 'two-letter country code')
    .option('--receipts <policy>', 'when its counter prints receipts by itself: always (default), ask or never')
    .addHelpText('after', '\nExample:\n  pos locations create --name "Front counter" --line1 "1 Market St" --city "San Francisco" --state CA --postal-code 94105 --country US')
    .action(lazy(async () => (await import('./terminal-action.js')).createLocation));
  locations
    .command('tipping')
    .description("Set a location's on-reader tipping, or turn it off")
    .argument('<location>', 'location uuid or display name')
    .option('--percentages <list>', 'up to three whole percentages, e.g. 15,18,20')
    .option('--fixed <list>', 'up to three amounts, e.g. 1,2,3')
    .option('--threshold <amount>', 'smart tips: fixed amounts below it, percentages from it up (needs both lists)')
    .option('--off', 'no tip screen at this location')
    .addHelpText('after', '\nExamples:\n  pos locations tipping Front --percentages 15,18,20 --fixed 1,2,3 --threshold 10\n  pos locations tipping Front --off')
    .action(lazy(async () => (await import('./terminal-action.js')).setTipping));
  locations
    .command('receipts')
    .description("Set when a location's counter prints the customer's receipt by itself; running agents follow at once")
    .argument('<location>', 'location uuid or display name')
    .argument('<policy>', 'always: every approved payment and cash sale · ask: staff are asked "Print receipt?" · never: only reprints from the history')
    .addHelpText('after', '\nExamples:\n  pos locations receipts Front ask\n  pos locations receipts Front never')
    .action(lazy(async () => (await import('./terminal-action.js')).setReceiptPolicy));
  locations
    .command('list')
    .description('Locations of the key’s mode')
    .addOption(wholeListAllOption())
    .action(lazy(async () => (await import('./terminal-action.js')).listLocations));
}
