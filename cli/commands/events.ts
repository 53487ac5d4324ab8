import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('The event log: what was emitted and what became of each webhook delivery');
  events
    .command('list')
    .description('List events, newest first')
    .option('--type <type>', 'only events of this type, e.g. payment.succeeded')
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./events-action.js')).listEvents));
  events
    .command('get')
    .description('Show an event with its deliveries and their attempts')
    .argument('<id>', 'event id (evt_…)')
    .action(lazy(async () => (await import('./events-action.js')).getEvent));
  events
    .command('resend')
    .description('Send an event again to one webhook endpoint (one attempt, now)')
    .argument('<id>', 'event id (evt_…)')
    .requiredOption('--endpoint <id>', 'webhook endpoint uuid or we_ reference')
    .addHelpText('after', '\nExample:\n  pos events resend evt_1hQk2n0aZ1bC3dE4fG5h --endpoint we_8fQk2n0aZ1bC3dE4fG5h')
    .action(lazy(async () => (await import('./events-action.js')).resendEvent));
}
